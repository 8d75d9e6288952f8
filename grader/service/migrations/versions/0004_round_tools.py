"""Tools of a hiring round (issue 21): regrades of a cohort, the scorecards they produced, and the
files an interviewer registers for a cohort's similarity check (``known_sources``).

A regrade never replaces a stored scorecard: its documents are rows of ``regraded_scorecards``,
beside the submission's row in ``scorecards``; the interviewer's choice of which stands is
``regrades.accepted`` (at most one accepted regrade per cohort; none: the original scorecards).

Revision ID: 0004
Revises: 0003
"""
import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "regrades",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("cohort_id", sa.Integer, sa.ForeignKey("cohorts.id"), nullable=False, index=True),
        sa.Column("grader_version", sa.String(64), nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("accepted", sa.Boolean, nullable=False),
        sa.Column("total", sa.Integer, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_table(
        "regraded_scorecards",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("regrade_id", sa.Integer, sa.ForeignKey("regrades.id"), nullable=False, index=True),
        sa.Column("submission_id", sa.Integer, sa.ForeignKey("submissions.id"), nullable=False, index=True),
        sa.Column("document", sa.JSON, nullable=False),
        sa.Column("score", sa.Float, nullable=False),
        sa.Column("max_score", sa.Float, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("regrade_id", "submission_id", name="uq_regraded_once"),
    )
    op.create_table(
        "known_sources",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("cohort_id", sa.Integer, sa.ForeignKey("cohorts.id"), nullable=False, index=True),
        sa.Column("exercise", sa.String(64), nullable=False),
        sa.Column("label", sa.String(255), nullable=False),
        sa.Column("source", sa.LargeBinary, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("known_sources")
    op.drop_table("regraded_scorecards")
    op.drop_table("regrades")
