"""Files the service owns are its own: the SQLite database and its -journal/-wal/-shm files are 0600,
folders the service makes for them 0700, the reference cache 0600 in 0700, whatever the umask; a
world-readable database left by an older server is narrowed, one that cannot be is refused; uploads
never reach the disk outside the database."""

from __future__ import annotations

import logging
import os
import sqlite3
import stat
from collections import OrderedDict
from pathlib import Path

import pytest
from sqlalchemy import text

from grader import private
from grader.service.db import make_engine, migrate, session_factory

pytestmark = pytest.mark.service


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def loose_umask():
    """The umask most hosts run with (0022: files 0644, folders 0755 unless told otherwise)."""
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def test_database_wal_and_shm_are_0600_in_a_0700_folder(tmp_path, loose_umask):
    db = tmp_path / "srv" / "data" / "service.db"
    engine = make_engine(f"sqlite:///{db}")
    migrate(engine)
    reader = engine.raw_connection()  # an open connection keeps the write-ahead log and its index
    try:
        reader.cursor().execute("SELECT count(*) FROM cohorts").fetchone()
        with session_factory(engine)() as s:
            s.execute(text("INSERT INTO cohorts (name, exercises, seed, created_at, max_attempts) "
                           "VALUES ('r', '[]', 1, '2026-01-01', 10)"))
            s.commit()
        files = {p.name: mode(p) for p in db.parent.iterdir()}
        assert files == {"service.db": 0o600, "service.db-wal": 0o600, "service.db-shm": 0o600}
    finally:
        reader.close()
        engine.dispose()
    assert mode(tmp_path / "srv") == mode(db.parent) == 0o700
    open(tmp_path / "control", "w").close()
    assert mode(tmp_path / "control") == 0o644  # the umask would have made it world-readable


def test_rollback_journal_takes_the_database_mode(tmp_path, loose_umask):
    """SQLite gives a journal the mode of its database; in DELETE mode (not the service's WAL) the
    -journal exists only inside a write transaction."""
    db = tmp_path / "j.db"
    private.ensure_file(db)
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.execute("CREATE TABLE t (x)")
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("INSERT INTO t VALUES (1)")
    assert mode(f"{db}-journal") == 0o600
    conn.execute("COMMIT")
    conn.close()


def test_an_existing_world_readable_database_is_narrowed_and_logged(tmp_path, loose_umask, caplog):
    db = tmp_path / "old.db"
    sqlite3.connect(db).close()
    for p in (db, Path(f"{db}-journal"), Path(f"{db}-wal")):
        p.touch()
        os.chmod(p, 0o644)
    with caplog.at_level(logging.WARNING, logger="grader.service"):
        make_engine(f"sqlite:///{db}").dispose()
    assert [mode(p) for p in (db, f"{db}-journal", f"{db}-wal")] == [0o600] * 3
    assert sum("could be read by other users" in r.getMessage() for r in caplog.records) == 3


def test_a_database_that_cannot_be_made_private_is_refused(tmp_path, monkeypatch):
    db = tmp_path / "theirs.db"
    db.touch()
    os.chmod(db, 0o644)

    def denied(path, _mode, **_kw):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(private.os, "chmod", denied)
    with pytest.raises(ValueError, match=r"theirs.db can be read by other users \(mode 0644\) and cannot be made 0600"):
        make_engine(f"sqlite:///{db}")


def test_a_folder_others_may_write_is_refused(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    with pytest.raises(ValueError, match="may be written by other users"):
        make_engine(f"sqlite:///{shared / 'service.db'}")
    assert not (shared / "service.db").exists()
    os.chmod(shared, 0o1777)  # sticky, like /tmp: others cannot replace our files
    make_engine(f"sqlite:///{shared / 'service.db'}").dispose()
    assert mode(shared / "service.db") == 0o600


def test_serve_refuses_a_database_it_cannot_make_private(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from grader.cli import main

    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    monkeypatch.setenv("GRADER_INTERVIEWER_TOKEN", "t" * 20)
    served = []
    monkeypatch.setattr("uvicorn.run", lambda *a, **k: served.append(a))  # never listen, even when this fails
    r = CliRunner().invoke(main, ["serve", "--sandbox", "process", "--db", f"sqlite:///{shared / 'x.db'}"])
    assert r.exit_code == 2 and "the database is not private" in r.output and "Traceback" not in r.output
    assert not served


def test_reference_cache_entries_are_0600_in_a_0700_folder(tmp_path, monkeypatch, loose_umask):
    from grader.grading import grade as grading
    from grader.grading.exercise import get_exercise

    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("GRADER_REFERENCE_CACHE", raising=False)
    monkeypatch.setattr(grading, "_ANSWERS", OrderedDict())
    monkeypatch.setattr(grading, "_PROBE_ANSWERS", OrderedDict())
    folder = tmp_path / "cache" / "references"
    folder.mkdir(parents=True)
    os.chmod(folder, 0o755)  # left open by an older grader: narrowed on the next store
    exercise = get_exercise("softmax")
    grading.answers_for(exercise, 3, grading.build_plan(exercise, 3))
    entries = list(folder.glob("*.npz"))  # the answers at seed 3, and the probes' (the same at every seed)
    assert len(entries) == 2 and all(mode(entry) == 0o600 for entry in entries)
    assert mode(folder) == 0o700


def test_uploads_stay_in_memory_until_stored_in_the_database():
    """The service keeps no upload folder: the multipart parser spools a part to a temporary file
    only past its spool size, and the service caps a part below it (``max_part_size``)."""
    from starlette.formparsers import MultiPartParser

    from grader.service.app import Settings

    settings = Settings(db_url="sqlite://", interviewer_token="t" * 20)
    assert settings.max_source_bytes + 1024 < MultiPartParser.spool_max_size
