"""Interview mode on many machines: the processes that share one queue, their heartbeats, and the
agreement check that keeps every grading on the server's grader.

Every ``grade serve`` and ``grade worker`` registers a row of ``workers`` (``register``) with its
``fingerprint``: grader, Python, NumPy and torch versions and, per exercise, its version and
``files_hash`` (``grader.cohort.ray_executor.fingerprint``, the check Ray's nodes pass before a
batch). A ``grade worker`` grades only while it agrees with the newest server (``disagreements``;
``queue.claim`` checks the digest in the claim's own transaction), and refuses to start otherwise,
naming what differs.

A ``Heartbeat`` thread per process renews the leases of the claims it holds every quarter of the
lease (``queue.renew``) and re-queues claims whose lease ran out anywhere in the fleet
(``queue.requeue_expired``): a worker killed with SIGKILL, or whose machine is gone, has its
submission graded once elsewhere; the new claim carries a new token, so a result the lost worker
sends late is discarded (``queue.complete``).

``run_worker`` is ``grade worker``: register, agree, grade with ``jobs`` grading processes (each with
its own warm pool; the reference cache is this machine's, ``grader.grading.reference_cache``) until
SIGTERM or Ctrl-C, then finish the gradings in hand within ``grace_s`` or give them back.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import secrets
import signal
import socket
import threading
from typing import Callable

from sqlalchemy import select, update
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import sessionmaker

from grader.service import queue
from grader.service.db import Worker, db_now
from grader.service.queue import DEFAULT_LEASE_S, WorkerRefused

log = logging.getLogger("grader.service.fleet")

__all__ = ["WorkerRefused", "agreement", "disagreements", "register", "server_fingerprint", "Heartbeat",
           "run_worker", "local_fingerprint"]


def local_fingerprint() -> dict:
    """What this process grades with (``ray_executor.fingerprint()``, without the sandbox state)."""
    from grader.cohort.ray_executor import fingerprint  # noqa: PLC0415 - loads every exercise

    return fingerprint()


def agreement(fp: dict) -> str:
    """Hex sha256 of the fields of ``fp`` that must agree across the fleet (the grader, Python,
    NumPy and torch versions; each exercise's version and files hash): two processes with equal
    digests grade alike. The host name and sandbox state are left out."""
    from grader.cohort.ray_executor import AGREEMENT_FIELDS  # noqa: PLC0415

    core = {k: fp.get(k) for k in AGREEMENT_FIELDS}
    core["exercises"] = fp.get("exercises", {})
    return hashlib.sha256(json.dumps(core, sort_keys=True).encode()).hexdigest()


def disagreements(server: dict, mine: dict) -> list[str]:
    """How ``mine`` differs from the server's fingerprint, one phrase each (empty: they agree)."""
    from grader.cohort.ray_executor import disagreements as differ  # noqa: PLC0415

    return differ(server, mine, reference="server")


def register(factory: sessionmaker, role: str, fp: dict, *, note: str | None = None,
             stopped: bool = False) -> str:
    """Insert this process's ``workers`` row and return its id (``host:pid:random``, 64 chars at most).

    Args:
        role: ``server`` (``grade serve``) or ``worker`` (``grade worker``).
        fp: its fingerprint (``local_fingerprint``).
        note, stopped: for a worker refused at start: why, and the row closed at once.
    """
    host = socket.gethostname()[:200]
    worker_id = f"{host}:{os.getpid()}:{secrets.token_hex(4)}"[:64]
    with factory() as session, session.begin():
        now = db_now(session)
        session.add(Worker(id=worker_id, role=role, host=host, pid=os.getpid(), fingerprint=fp,
                           agreement=agreement(fp), started_at=now, heartbeat_at=now,
                           stopped_at=now if stopped else None, note=note))
    return worker_id


def mark_stopped(factory: sessionmaker, worker_id: str, note: str) -> None:
    """Close ``worker_id``'s row (stopped now, ``note`` saying how)."""
    with factory() as session, session.begin():
        session.execute(update(Worker).where(Worker.id == worker_id)
                        .values(stopped_at=db_now(session), note=note[:4000])
                        .execution_options(synchronize_session=False))


def server_fingerprint(factory: sessionmaker) -> dict | None:
    """The fingerprint of the newest ``grade serve`` registered, or None (none yet, or a database
    no server has set up: its tables are missing)."""
    try:
        with factory() as session:
            return session.scalar(select(Worker.fingerprint).where(Worker.role == "server")
                                  .order_by(Worker.started_at.desc(), Worker.id).limit(1))
    except DBAPIError:
        return None


class Heartbeat:
    """A daemon thread that, every ``lease_s / 4`` seconds, renews ``worker_id``'s leases and
    re-queues expired claims of the whole fleet. A failed beat (database unreachable) is logged and
    retried; if beats fail for longer than the lease, other workers take the claims over and this
    worker's results are discarded, never stored twice.

    Args:
        factory: the database's session factory.
        worker_id: the ``workers`` row to stamp (and whose claims to renew).
        lease_s: seconds a claim holds without a beat.
    """

    def __init__(self, factory: sessionmaker, worker_id: str, lease_s: float = DEFAULT_LEASE_S):
        self.factory, self.worker_id, self.lease_s = factory, worker_id, lease_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="grader-heartbeat", daemon=True)

    def start(self) -> "Heartbeat":
        """Start beating (the first beat is immediate)."""
        self._thread.start()
        return self

    def beat(self) -> list[int]:
        """One beat: renew, then re-queue expired claims. Returns the ids re-queued."""
        queue.renew(self.factory, self.worker_id, self.lease_s)
        back = queue.requeue_expired(self.factory)
        if back:
            log.warning("re-queued %d submissions whose worker stopped heartbeating (lease expired): %s",
                        len(back), ", ".join(map(str, back)))
        return back

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.beat()
            except Exception:  # noqa: BLE001 - database unreachable: try again next beat
                log.exception("heartbeat")
            self._stop.wait(self.lease_s / 4)

    def stop(self) -> None:
        """Stop beating (waits for a beat in progress)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(30)


def _wait_for_server(factory: sessionmaker, say: Callable[[str], None], stop: threading.Event,
                     poll_s: float) -> dict | None:
    """The newest server's fingerprint, waiting (until ``stop``) for a server to register.

    Raises:
        sqlalchemy.exc.OperationalError: the database cannot be reached at all.
    """
    with factory() as session:
        session.connection()  # unreachable, wrong credentials: raise now rather than wait for ever
    fp = server_fingerprint(factory)
    if fp is None:
        say("waiting for a `grade serve` to set up this database and register (start the server)")
    while fp is None and not stop.wait(poll_s):
        fp = server_fingerprint(factory)
    return fp


def run_worker(db_url: str, *, jobs: int = 1, sandbox: str = "docker", warm: dict | None = None,
               lease_s: float = DEFAULT_LEASE_S, poll_s: float = 1.0, grace_s: float = 60.0,
               say: Callable[[str], None] = print) -> int:
    """``grade worker``: grade submissions of the service whose database is ``db_url`` until
    SIGTERM or SIGINT.

    Args:
        db_url: the server's database (``postgresql://...``; ``sqlite:///PATH`` for one machine).
        jobs: submissions graded at once, each in a grading process of its own.
        sandbox: ``docker`` or ``process``.
        warm: sandboxes each grading process keeps started ahead, by runtime (``{"numpy": n, "torch": m}``).
        lease_s: seconds a claim of this worker holds without a heartbeat; a worker lost for longer
            has its claims graded elsewhere.
        poll_s: seconds between looks at an empty queue.
        grace_s: after SIGTERM/SIGINT, seconds to finish the gradings in hand before giving them back
            (a second signal gives them back at once).
        say: where the one-line progress messages go.
    Returns:
        0 after a clean stop; 3 when refused (it disagrees with the server; the message names what)
        or when the database cannot be reached.
    Raises:
        ValueError: a bad database URL.
    """
    from grader.service.db import make_engine, session_factory  # noqa: PLC0415
    from grader.service.worker import WorkerPool  # noqa: PLC0415

    engine = make_engine(db_url)
    factory = session_factory(engine)
    stop, signals = threading.Event(), []

    def on_signal(signum, _frame):
        signals.append(signum)
        stop.set()

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        try:
            server = _wait_for_server(factory, say, stop, poll_s)
        except DBAPIError as exc:
            say(f"error: cannot reach the database: {str(exc.orig or exc).strip().splitlines()[0]}")
            return 3
        if server is None:
            return 0
        mine = local_fingerprint()
        diffs = disagreements(server, mine)
        if diffs:
            why = "; ".join(diffs)
            register(factory, "worker", mine, note=f"refused: {why}", stopped=True)
            say(f"error: refused: this worker does not agree with the server ({why}); install the "
                "server's grader and exercise files on this machine")
            return 3
        worker_id = register(factory, "worker", mine)
        heartbeat = Heartbeat(factory, worker_id, lease_s).start()
        pool = WorkerPool(factory, jobs, sandbox, poll_s, warm=warm, worker_id=worker_id, lease_s=lease_s,
                          agreement=agreement(mine), on_stop=stop.set)
        pool.start()
        say(f"worker {worker_id}: grading with {jobs} {sandbox} sandbox{'es' if jobs > 1 else ''} "
            f"(lease {lease_s:g} s; SIGTERM or Ctrl-C stops it)")
        while not stop.wait(1.0):
            pass
        if pool.refused:
            note = f"refused: {pool.refused}"
            say(f"error: {note}; stopping")
        else:
            note = f"stopped by signal {signals[0] if signals else '?'}"
            say(f"stopping: finishing the gradings in hand (up to {grace_s:g} s; Ctrl-C again gives them back now)")
        signals.clear()
        released = pool.stop(grace_s, interrupted=lambda: bool(signals))
        if released:
            say(f"gave back {len(released)} submission{'s' if len(released) > 1 else ''} to the queue: "
                + ", ".join(map(str, released)))
        heartbeat.stop()
        mark_stopped(factory, worker_id, note)
        say(f"worker {worker_id}: stopped")
        return 3 if pool.refused else 0
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
        engine.dispose()
