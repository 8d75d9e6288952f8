"""Workers of the service: receive, run, report, acknowledge.

Each worker is a thread of the server process (``grade serve``) or of a ``grade worker`` process on
any machine (``grader.service.fleet``). It claims one submission (``queue.claim``, under its worker
id and a lease its process's heartbeat renews), grades it in a fresh sandbox through
``grade_one_json`` (the executor seam shared with ``grade batch``) in a grading process of its own,
then stores the scorecard and marks the submission graded in one transaction (``queue.complete``).
A crash anywhere before that commit leaves the submission ``running`` until its lease ends; then any
live worker re-queues it (``queue.requeue_expired``), and grading it again is harmless because
nothing was stored (a late result of the lost claim is discarded). An infrastructure error is
retried (``queue.retry_or_fail``) and never stored as a score.
"""

from __future__ import annotations

import ctypes
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from sqlalchemy.orm import sessionmaker

from grader.grading.exercise import track_for_source
from grader.grading.scorecard import Scorecard, validate
from grader.judge.verdicts import Status
from grader.service import queue

log = logging.getLogger("grader.service.worker")


def grade_one_json(exercise_id: str, source: bytes, seed: int, sandbox: str) -> dict:
    """Grade ``source`` as a submission of ``exercise_id`` with the cohort's ``seed`` through the
    executor seam (``grader.cohort.executors.grade_one``, the same path as ``grade batch``), in the
    track its imports name when the exercise has one (``track_for_source``), else the default.

    The bytes travel in the job; the scorecard records the path ``submission.py`` (``submission.ipynb``
    for a Jupyter notebook, told from its bytes by ``grader.grading.notebook.looks_like_notebook``):
    no name from the upload is ever used as a path.

    Args:
        sandbox: ``docker`` (isolation required) or ``process``.
    Returns:
        The interviewer-view scorecard document, validated against the schema (a grader fault is an
        ``infrastructure_error`` document, which the worker retries).
    Raises:
        jsonschema.ValidationError: the document does not match the schema (a grader bug).
    """
    from grader.cohort.executors import GradeJob, grade_one  # noqa: PLC0415 - heavy, first use only

    from grader.grading.notebook import looks_like_notebook, submission_text  # noqa: PLC0415

    notebook = looks_like_notebook(source)  # an uploaded .ipynb: its code cells are graded
    job = GradeJob(exercise=exercise_id, path="submission.ipynb" if notebook else "submission.py", seed=seed,
                   source=source, track=track_for_source(exercise_id, (submission_text(source) or "") if notebook
                                                         else source), sandbox=sandbox,
                   require_isolation=(sandbox == "docker"), view="interviewer")
    _BUSY.set()
    try:
        document = grade_one(job)
    finally:
        _BUSY.clear()
        if _DYING.is_set():
            # SIGTERM from the kernel (the worker died): the sandbox is cleaned up by now; leave,
            # instead of going back to wait on a call queue that this process itself holds open
            os._exit(0)
    validate(document)
    return document


#: Set while this grading process grades (its sandbox then needs the clean-up on the way out).
_BUSY = threading.Event()
#: Set by SIGTERM during a grading: the process exits once the sandbox is cleaned up.
_DYING = threading.Event()


def _on_sigterm(_signum, _frame) -> None:
    if not _BUSY.is_set():
        # idle (waiting on the pool's queue): discard the waiting sandboxes (containers are removed,
        # not merely left to exit on end of file), then leave without a traceback
        from grader.sandbox.pool import installed  # noqa: PLC0415

        pool = installed()
        if pool is not None:
            try:
                pool.close(timeout=5.0)
            except Exception:  # noqa: BLE001 - best effort; the sweep removes what is left
                pass
        os._exit(0)
    _DYING.set()
    raise KeyboardInterrupt  # the sandbox backend's own clean-up runs on the way out


def _grading_process_init(server_pid: int, sandbox: str = "docker", warm: dict | None = None) -> None:
    """In each grading process: leave Ctrl-C to the server (which stops the pool itself), and die
    with the server: ``prctl(PR_SET_PDEATHSIG, SIGTERM)`` (Linux) makes the kernel send SIGTERM when
    the server is killed, even by ``kill -9``, so no grading process outlives it.

    With ``warm`` (sandboxes kept waiting per runtime, ``{"numpy": n, "torch": m}``), a
    ``grader.sandbox.pool.WarmPool`` of the backend (``docker`` containers or ``process`` runners) is
    installed in the process: its gradings take a sandbox started ahead (one per submission, never
    reused). Its waiting runners exit when this process ends (end of file on their stdin), and are
    discarded at exit (``pool.close``, registered by ``install``).
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _on_sigterm)
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG
    if os.getppid() != server_pid:  # the server died before prctl took effect
        os._exit(0)
    if warm and any(warm.values()):
        install_warm_pool(sandbox, warm)


def install_warm_pool(sandbox: str, warm: dict):
    """Install a ``WarmPool`` of ``sandbox`` (``docker`` or ``process``) sandboxes kept waiting per
    runtime (``warm``: ``{"numpy": n, "torch": m}``) in this process; returns it, or None when the
    backend is not ready here (gradings then select and report that themselves, cold)."""
    from grader.sandbox.pool import WarmPool, install  # noqa: PLC0415

    if sandbox == "docker":
        from grader.sandbox.docker import DockerSandbox  # noqa: PLC0415

        backend, why = DockerSandbox.if_ready()
        if backend is None:
            log.warning("warm pool: none (%s)", why)
            return None
    elif sandbox == "process":
        from grader.sandbox.process import ProcessSandbox  # noqa: PLC0415

        backend = ProcessSandbox()
    else:
        return None
    pool = WarmPool(backend, warm)
    install(pool)
    return pool


class GradingProcesses:
    """A pool of ``n`` spawned processes, each grading one submission at a time.

    Grading runs outside the server's process because the host measures the reference's peak
    memory with ``tracemalloc``, which is process-wide: two gradings in threads of one process
    disturb each other's figures (a correct softmax then failed ``memory_scaling`` under load).
    A process that dies breaks the pool; it is rebuilt and the submission counts as an
    infrastructure error (retried). The processes die with the server (``_grading_process_init``).

    Args:
        n: grading processes.
        sandbox: the backend they grade in (``docker`` or ``process``).
        warm: sandboxes each process keeps started ahead, by runtime (``{"numpy": n, "torch": m}``;
            ``grader.sandbox.pool``); ``docker`` and ``process`` both pool.
    """

    def __init__(self, n: int, sandbox: str = "docker", warm: dict | None = None):
        self.n, self.sandbox, self.warm = n, sandbox, dict(warm or {})
        self._lock = threading.Lock()
        self._pool = None

    def _get(self):
        with self._lock:
            if self._pool is None:
                self._pool = ProcessPoolExecutor(self.n, mp_context=multiprocessing.get_context("spawn"),
                                                 initializer=_grading_process_init,
                                                 initargs=(os.getpid(), self.sandbox, self.warm))
            return self._pool

    def __call__(self, exercise_id: str, source: bytes, seed: int, sandbox: str) -> dict:
        pool = self._get()
        try:
            return pool.submit(grade_one_json, exercise_id, source, seed, sandbox).result()
        except BrokenProcessPool:
            with self._lock:
                if self._pool is pool:
                    self._pool = None
            pool.shutdown(wait=False, cancel_futures=True)
            raise

    def shutdown(self, wait: bool = True) -> None:
        """Stop the processes: after their current submission, or (``wait=False``) at once: each gets
        SIGTERM, cleans up its sandbox and exits (``_on_sigterm``), so that this process's exit does
        not wait for a grading whose claim was given back."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is None:
            return
        processes = [] if wait else list((getattr(pool, "_processes", None) or {}).values())  # no public API
        pool.shutdown(wait=wait, cancel_futures=True)
        for proc in processes:
            try:
                os.kill(proc.pid, signal.SIGTERM)
            except (ProcessLookupError, PermissionError):
                pass


def process_one(factory: sessionmaker, sandbox: str, grade=grade_one_json, *, worker_id: str | None = None,
                lease_s: float = queue.DEFAULT_LEASE_S, agreement: str | None = None) -> bool:
    """Claim and grade one submission with ``grade`` (``grade_one_json`` or a ``GradingProcesses``).

    Args:
        worker_id, lease_s, agreement: of the claim (``queue.claim``).
    Returns False when the queue was empty.
    Raises:
        queue.WorkerRefused: this worker disagrees with the server (nothing claimed).
    """
    claim = queue.claim(factory, worker_id=worker_id, lease_s=lease_s, agreement=agreement)
    if claim is None:
        return False
    started = time.monotonic()
    try:
        document = grade(claim.exercise, claim.source, claim.seed, sandbox)
        card = Scorecard.from_json(document)
    except Exception as exc:  # noqa: BLE001 - a grader fault, never the candidate's
        log.exception("grading submission %s failed", claim.submission_id)
        card, error = None, f"Grader fault ({type(exc).__name__}): {exc}"
    if card is None or card.status == Status.INFRASTRUCTURE_ERROR:
        error = error if card is None else card.status_message
        status = queue.retry_or_fail(factory, claim, error)
        log.warning("submission %s: infrastructure error (attempt %s) -> %s", claim.submission_id,
                    claim.attempt, status or "claim lost")
        return True
    if queue.complete(factory, claim, document, card.score, card.max_score):
        log.info("graded submission %s (%s, attempt %s) in %.1f s: %g/%g", claim.submission_id, claim.exercise,
                 claim.attempt, time.monotonic() - started, card.score, card.max_score)
    else:
        log.warning("submission %s: claim lost before its scorecard was stored (result discarded)",
                    claim.submission_id)
    return True


class WorkerPool:
    """``n`` worker threads taking work from the queue until ``stop``, each grading in one of ``n``
    grading processes (``GradingProcesses``).

    Args:
        factory: session factory of the service's database.
        n: number of workers (each grades one submission at a time); 0: none (``grade serve
            --workers 0``, when ``grade worker`` processes grade).
        sandbox: ``docker`` or ``process``.
        poll_s: seconds a worker sleeps when the queue is empty, unless ``wake`` is called.
        warm: warm sandboxes per grading process, by runtime (see ``GradingProcesses``).
        worker_id: the ``workers`` row whose heartbeat holds the claims (``grader.service.fleet``).
        lease_s: seconds a claim holds without a heartbeat.
        agreement: the agreement digest every claim checks against the server's (None: no check,
            the server's own workers).
        on_stop: called (from a worker thread) when the pool stops itself: refused by the server.
    """

    def __init__(self, factory: sessionmaker, n: int, sandbox: str, poll_s: float = 1.0, warm: dict | None = None,
                 *, worker_id: str | None = None, lease_s: float = queue.DEFAULT_LEASE_S,
                 agreement: str | None = None, on_stop=None):
        self.factory, self.n, self.sandbox, self.poll_s = factory, n, sandbox, poll_s
        self.worker_id, self.lease_s, self.agreement, self.on_stop = worker_id, lease_s, agreement, on_stop
        self.grade = GradingProcesses(max(n, 1), sandbox, warm)
        #: why the server refused this worker (set when a claim raised ``WorkerRefused``), else None
        self.refused: str | None = None
        self._stop = threading.Event()
        self._wake = threading.Condition()
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        """Start the worker threads."""
        for i in range(self.n):
            t = threading.Thread(target=self._loop, name=f"grader-worker-{i}", daemon=True)
            t.start()
            self._threads.append(t)

    def wake(self) -> None:
        """Tell idle workers that work was queued."""
        with self._wake:
            self._wake.notify_all()

    def stop(self, timeout: float = 30.0, interrupted=lambda: False) -> list[int]:
        """Stop claiming, and wait up to ``timeout`` seconds (or until ``interrupted()`` is true) for
        the gradings in hand; those not done by then are given back to the queue (``queue.release``)
        when the pool has a ``worker_id``, and their grading processes are left to die with this one.

        Returns:
            The ids of the submissions given back.
        """
        self._stop.set()
        self.wake()
        deadline = time.monotonic() + timeout
        for t in self._threads:
            while t.is_alive() and time.monotonic() < deadline and not interrupted():
                t.join(0.2)
        busy = any(t.is_alive() for t in self._threads)
        released = queue.release(self.factory, self.worker_id) if busy and self.worker_id else []
        if released:
            log.warning("gave back %d submissions still being graded: %s", len(released), ", ".join(map(str, released)))
        self.grade.shutdown(wait=not busy)
        return released

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                busy = process_one(self.factory, self.sandbox, self.grade, worker_id=self.worker_id,
                                   lease_s=self.lease_s, agreement=self.agreement)
            except queue.WorkerRefused as exc:
                log.error("refused by the server: %s", exc)
                self.refused = str(exc)
                self._stop.set()
                if self.on_stop is not None:
                    self.on_stop()
                return
            except Exception:  # noqa: BLE001 - database unreachable: wait, then try again
                log.exception("worker loop")
                busy = False
            if not busy:
                with self._wake:
                    if not self._stop.is_set():
                        self._wake.wait(self.poll_s)
