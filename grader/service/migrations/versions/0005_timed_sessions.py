"""Timed sessions, time on task and released feedback (issue 21 items 2, 3, 6).

Revision ID: 0005
Revises: 0004
"""
import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("cohorts", sa.Column("duration_minutes", sa.Integer, nullable=True))
    op.add_column("cohorts", sa.Column("feedback_released_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column("candidates", sa.Column("started_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column("candidates", sa.Column("feedback_released_at", sa.DateTime(timezone=True), nullable=True))
    op.create_table(
        "exercise_opens",
        sa.Column("candidate_id", sa.Integer, sa.ForeignKey("candidates.id"), primary_key=True),
        sa.Column("exercise", sa.String(64), primary_key=True),
        sa.Column("opened_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("exercise_opens")
    for table, column in (("candidates", "feedback_released_at"), ("candidates", "started_at"),
                          ("cohorts", "feedback_released_at"), ("cohorts", "duration_minutes")):
        with op.batch_alter_table(table) as batch:
            batch.drop_column(column)
