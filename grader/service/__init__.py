"""Interview mode: the grading service (``grade serve``).

The service holds the exercises, the references, the cohorts' hidden seeds and the interviewer
views; candidates hold a token and receive candidate views only. Modules, in the order a
submission meets them:

* ``app``: FastAPI routes (JSON API) and Jinja2 pages; thin, they call the functions below.
* ``deps``: authentication as FastAPI dependencies (interviewer token, candidate invite tokens).
* ``db``: SQLAlchemy 2 models and sessions (SQLite file by default, PostgreSQL by URL).
* ``migrations``: the Alembic environment and revisions, run at start.
* ``queue``: enqueue, atomic claim, acknowledge, re-queue after a crash.
* ``worker``: the loop that receives, grades, reports and acknowledges.
* ``client``: the httpx client behind ``grade submit --server``.
"""
