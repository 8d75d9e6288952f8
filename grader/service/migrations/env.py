"""Alembic environment of the service: runs on the connection ``grader.service.db.migrate`` passes."""

from alembic import context

from grader.service.db import Base

connection = context.config.attributes.get("connection")
if connection is None:  # pragma: no cover - only `migrate` drives these migrations
    raise RuntimeError("run the service's migrations through grader.service.db.migrate(engine)")
context.configure(connection=connection, target_metadata=Base.metadata)
with context.begin_transaction():
    context.run_migrations()
