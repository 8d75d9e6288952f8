"""Workers on many machines: the ``workers`` table (heartbeats, what each grades with), the claim's
holder and lease on ``submissions``, and ``gradings`` (one row per claim and how it ended).

Revision ID: 0003
Revises: 0002
"""
import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("submissions", sa.Column("worker_id", sa.String(64), nullable=True))
    op.add_column("submissions", sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True))
    op.create_table(
        "workers",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("pid", sa.Integer, nullable=False),
        sa.Column("fingerprint", sa.JSON, nullable=False),
        sa.Column("agreement", sa.String(64), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("stopped_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("note", sa.Text, nullable=True),
    )
    op.create_table(
        "gradings",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("submission_id", sa.Integer, sa.ForeignKey("submissions.id"), nullable=False, index=True),
        sa.Column("worker_id", sa.String(64), nullable=True),
        sa.Column("claim_token", sa.String(64), nullable=False, unique=True),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("outcome", sa.String(16), nullable=True),
    )


def downgrade() -> None:
    op.drop_table("gradings")
    op.drop_table("workers")
    with op.batch_alter_table("submissions") as batch:
        batch.drop_column("lease_until")
        batch.drop_column("worker_id")
