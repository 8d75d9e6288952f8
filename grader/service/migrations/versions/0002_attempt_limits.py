"""Attempt limits: each cohort says how many uploads a candidate may make per exercise.

Revision ID: 0002
Revises: 0001
"""
import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # existing cohorts get the default of grader.service.db.DEFAULT_MAX_ATTEMPTS (10), written out:
    # a migration must not change when the model's default does
    op.add_column("cohorts", sa.Column("max_attempts", sa.Integer, nullable=False, server_default="10"))


def downgrade() -> None:
    with op.batch_alter_table("cohorts") as batch:
        batch.drop_column("max_attempts")
