"""The executor seam: one plain function grades one submission, executors map it over many.

``grade_one(job) -> dict`` grades one ``GradeJob`` and returns its scorecard as a JSON document (the
view the job asks for). It is the unit of work of every way of grading many submissions:

* ``LocalExecutor`` (the default of ``grade batch``): worker processes on this machine (``spawn``),
  or inline in this process for one job;
* ``RayExecutor`` (``grade batch --ray ADDRESS``, ``grader.cohort.ray_executor``): one Ray task per
  submission on the nodes of a cluster;
* the interview-mode service's workers call ``grade_one`` directly.

Nothing below this module knows how it is scheduled (STYLE.md, "Distribute at the edge"). An executor
yields ``(index of the job, scorecard document)`` as each finishes; a grader fault of any kind, in the
grading or in the executor (a worker process that died, a lost node), becomes an
``infrastructure_error`` scorecard, never a candidate's zero.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import signal
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable, Iterator, Sequence

from grader import __version__
from grader.grading.exercise import Exercise, get_exercise
from grader.grading.scorecard import CheckResult, Scorecard
from grader.judge.verdicts import Status, Verdict

VIEWS = ("interviewer", "candidate")


@dataclass(frozen=True)
class GradeJob:
    """One submission to grade: everything a worker on any machine needs, and nothing of the host.

    Attributes:
        exercise: exercise id (``grade list``).
        path: the submission's path as the caller knows it; recorded in the scorecard, and read
            when ``source`` is None (so only on a machine that has the file).
        seed: hidden-case seed (int); a batch gives every job the same one.
        source: the submission's bytes; set it when the job runs where ``path`` does not exist
            (another Ray node, a service worker reading from its database).
        track: ``numpy`` or ``torch`` where the exercise has tracks; None: its default track.
        sandbox: ``auto``, ``process`` or ``docker`` (``grader.sandbox.select_sandbox``).
        require_isolation: refuse any backend weaker than docker (``infrastructure_error``).
        view: ``interviewer`` (everything) or ``candidate`` (hidden cases redacted, no seed).
    """

    exercise: str
    path: str
    seed: int
    source: bytes | None = None
    track: str | None = None
    sandbox: str = "auto"
    require_isolation: bool = False
    view: str = "interviewer"

    def __post_init__(self) -> None:
        if self.view not in VIEWS:
            raise ValueError(f"view must be one of {VIEWS}, not {self.view!r}")

    def with_source(self) -> "GradeJob":
        """The same job carrying the file's bytes (read here), for workers that cannot see ``path``.

        Raises:
            OSError: the file cannot be read.
        """
        if self.source is not None:
            return self
        return GradeJob(**{**self.__dict__, "source": Path(self.path).read_bytes()})


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file's bytes.

    Raises:
        OSError: the file cannot be read.
    """
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def infrastructure_card(exercise: Exercise | None, exercise_id: str, path: Path, message: str,
                        seed: int | None = None, *, source: bytes | None = None) -> Scorecard:
    """A scorecard saying the grader failed on this submission (never charged to the candidate):
    status ``infrastructure_error``, score 0, every check ``skipped`` with ``message``."""
    try:
        digest = hashlib.sha256(source).hexdigest() if source is not None else sha256_file(path)
    except OSError:
        digest = None
    checks = tuple(CheckResult(id=c.id, title=c.title, category=c.category, visibility=c.visibility,
                               verdict=str(Verdict.SKIPPED), points=0.0, max_points=c.points,
                               message=f"Not graded: {message}") for c in (exercise.checks if exercise else ()))
    from grader.grading.grade import environment  # noqa: PLC0415 - heavy import, only on this path

    return Scorecard(
        exercise={"id": exercise_id, "version": exercise.version if exercise else "unknown",
                  "title": exercise.title if exercise else exercise_id,
                  **({"track": exercise.track} if exercise else {})},
        submission={"path": str(path), "sha256": digest},
        sandbox={"backend": "none", "image": None, "isolation": {}, "limits": {}},
        environment=environment(), started_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        duration_s=0.0, status=str(Status.INFRASTRUCTURE_ERROR), status_message=message, score=0.0,
        max_score=float(exercise.max_score) if exercise else 0.0, checks=checks,
        output={"text": "", "truncated": False}, seed=seed, grader_version=__version__)


def _view(card: Scorecard, view: str) -> dict:
    return (card.candidate_view() if view == "candidate" else card).to_json()


def fault_document(job: GradeJob, message: str) -> dict:
    """The scorecard document (in ``job.view``) of a grader fault on ``job``: see ``infrastructure_card``."""
    try:
        exercise = get_exercise(job.exercise, track=job.track)
    except Exception:  # noqa: BLE001 - an unknown exercise is itself the fault being reported
        exercise = None
    return _view(infrastructure_card(exercise, job.exercise, Path(job.path), message, job.seed,
                                     source=job.source), job.view)


def grade_one(job: GradeJob) -> dict:
    """Grade one submission and return its scorecard document in ``job.view``.

    The document validates against ``grader/schemas/scorecard.schema.json``. Any exception of the
    grader (an unknown exercise, an unreadable file, a bug) gives an ``infrastructure_error``
    document; only ``KeyboardInterrupt``/``SystemExit`` propagate (the sandbox backend has cleaned
    up its run by then).
    """
    exercise = None
    try:
        from grader.grading import grade as grading  # noqa: PLC0415 - heavy, and patched by tests

        exercise = get_exercise(job.exercise, track=job.track)
        kwargs = {"source": job.source} if job.source is not None else {}
        card = grading.grade_submission(exercise, job.path, sandbox=job.sandbox, seed=job.seed,
                                        require_isolation=job.require_isolation, **kwargs)
    except Exception as exc:  # noqa: BLE001 - one broken submission never stops a batch
        card = infrastructure_card(exercise, job.exercise, Path(job.path),
                                   f"Grader fault ({type(exc).__name__}): {exc}", job.seed, source=job.source)
    return _view(card, job.view)


class Executor:
    """Maps ``grade_one`` over jobs. Use as: ``for index, doc in ex.imap_unordered(jobs)``; on
    ``KeyboardInterrupt`` call ``cancel()`` (stops the running sandboxes, returns what finished
    unseen), and always ``close()``."""

    #: a short name for messages ("local", "ray")
    name = "executor"

    def imap_unordered(self, jobs: Sequence[GradeJob]) -> Iterator[tuple[int, dict]]:
        """Grade ``jobs``; yield ``(index into jobs, scorecard document)`` in the order they finish."""
        raise NotImplementedError

    def cancel(self) -> list[tuple[int, dict]]:
        """Stop: queued jobs never start, running ones are interrupted (their sandboxes cleaned up).
        Returns the jobs that had finished but were not yet yielded."""
        return []

    def close(self) -> None:
        """Release workers (idempotent)."""

    def __enter__(self) -> "Executor":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# -- local: worker processes on this machine ----------------------------------------------------------

_STOPPING = False
_BUSY = False
#: Exit status of a pool worker told to stop (the batch itself exits 130).
WORKER_STOPPED = 130
#: How long stopped workers get to clean up their sandboxes before they are killed (seconds).
STOP_GRACE_S = 10.0


def _discard_warm_pool() -> None:
    """Discard the sandboxes this process's warm pool keeps waiting (runners and their folders, or
    containers) before an ``os._exit``, which skips the pool's own ``atexit`` close."""
    from grader.sandbox.pool import installed  # noqa: PLC0415

    pool = installed()
    if pool is not None:
        try:
            pool.close(timeout=5.0)
        except Exception:  # noqa: BLE001 - best effort; the next pool's start sweeps what is left
            pass


def _sweep_dead_workers_folders() -> list[str]:
    """Remove the warm sandboxes' folders of grading processes that are gone (both backends' prefixes).

    A worker told to stop discards its warm pool before it exits, but one killed past the grace period
    (a loaded machine: a start in flight, discards waiting on their readers) cannot; its waiting
    runners exit on end of file, their folders stay. The parent calls this once its workers are
    joined (reaped, so their pids are gone). Returns the folders removed."""
    from grader.sandbox.base import sweep_orphan_folders  # noqa: PLC0415
    from grader.sandbox.process import WARM_PREFIX as PROCESS_WARM  # noqa: PLC0415

    removed = sweep_orphan_folders(PROCESS_WARM)
    try:
        from grader.sandbox.docker import WARM_PREFIX as DOCKER_WARM  # noqa: PLC0415
    except ImportError:  # the docker SDK is missing: no docker sandbox was ever started
        return removed
    return removed + sweep_orphan_folders(DOCKER_WARM)


def _stop_worker(_signum, _frame) -> None:
    global _STOPPING  # noqa: PLW0603 - the one flag a signal handler may set
    if not _STOPPING:
        _STOPPING = True
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if not _BUSY:  # idle between submissions: nothing to clean up, so leave now
            _discard_warm_pool()
            os._exit(WORKER_STOPPED)
        raise KeyboardInterrupt


def _worker_init(warm: dict | None = None, sandbox: str = "auto", require_isolation: bool = False) -> None:
    """Workers leave Ctrl-C to the parent, which stops them with SIGTERM (turned into KeyboardInterrupt
    here, so the sandbox backend's own clean-up runs). They start with SIGINT and SIGTERM blocked
    (``LocalExecutor`` spawns them so, and the mask survives exec), so a Ctrl-C during their start-up
    never kills one mid-import; SIGTERM is unblocked once its handler is in place. With ``warm``,
    each worker then installs its own warm pool (``grader.sandbox.pool.install_for``); its waiting
    sandboxes end with the worker (end of file on their stdin) and are discarded at its exit."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _stop_worker)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    if warm:
        from grader.sandbox.pool import install_for  # noqa: PLC0415

        install_for(sandbox, warm, require_isolation=require_isolation)


def _pool_grade(job: GradeJob) -> dict | None:
    """``grade_one`` in a pool worker; None once the worker has been told to stop. Told to stop
    mid-submission, the sandbox is cleaned up as the interrupt unwinds, then the worker exits at once
    (rather than waiting for more work while the parent waits for it)."""
    global _BUSY  # noqa: PLW0603
    if _STOPPING:
        return None
    _BUSY = True
    try:
        return grade_one(job)
    except KeyboardInterrupt:
        _discard_warm_pool()
        os._exit(WORKER_STOPPED)
    finally:
        _BUSY = False


class LocalExecutor(Executor):
    """Today's ``grade batch`` workers: ``jobs`` processes (``spawn``: each keeps its own imports and
    torch dispatch state, and the process backend waits on a subprocess), or this process itself when
    ``jobs == 1`` or there is one job.

    Args:
        jobs: parallel sandboxes (>= 1).
        warm: sandboxes each grading process keeps started ahead, by runtime (``{"numpy": n,
            "torch": m}``; ``grader.sandbox.pool``: one fresh sandbox per submission, with the limits
            and isolation of a cold run, never reused; the first submission of each exercise runs
            cold and teaches the pool its limits). None or zeros: every run cold.
        sandbox, require_isolation: the backend the warm pool starts (as the jobs ask for).
    """

    name = "local"

    def __init__(self, jobs: int = 1, *, warm: dict | None = None, sandbox: str = "auto",
                 require_isolation: bool = False):
        self.jobs = max(1, int(jobs))
        self.warm = {k: int(v) for k, v in (warm or {}).items() if int(v) > 0}
        self.sandbox, self.require_isolation = sandbox, require_isolation
        #: the warm pool installed in this process when it grades inline (jobs == 1), else None
        self.pool = None
        self._pool: ProcessPoolExecutor | None = None
        self._futures: dict[Future, int] = {}
        self._jobs: list[GradeJob] = []
        self._seen: set[Future] = set()

    def imap_unordered(self, jobs: Sequence[GradeJob]) -> Iterator[tuple[int, dict]]:
        """See ``Executor.imap_unordered``; a worker process that died gives an ``infrastructure_error``."""
        self._jobs = list(jobs)
        if self.jobs == 1 or len(self._jobs) <= 1:
            if self.warm and len(self._jobs) > 1:
                from grader.sandbox.pool import install_for  # noqa: PLC0415

                self.pool = install_for(self.sandbox, self.warm, require_isolation=self.require_isolation)
            try:
                for index, job in enumerate(self._jobs):
                    yield index, grade_one(job)
            finally:
                self._close_pool()
            return
        blocked = {signal.SIGINT, signal.SIGTERM}
        signal.pthread_sigmask(signal.SIG_BLOCK, blocked)  # inherited by the workers (see _worker_init)
        try:
            self._pool = ProcessPoolExecutor(max_workers=self.jobs, mp_context=multiprocessing.get_context("spawn"),
                                             initializer=_worker_init,
                                             initargs=(self.warm, self.sandbox, self.require_isolation))
            self._futures = {self._pool.submit(_pool_grade, job): i for i, job in enumerate(self._jobs)}
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, blocked)
        pending = set(self._futures)
        while pending:
            finished, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
            for fut in finished:
                self._seen.add(fut)
                doc = self._document(fut)
                if doc is not None:
                    yield self._futures[fut], doc

    def _document(self, fut: Future) -> dict | None:
        job = self._jobs[self._futures[fut]]
        try:
            return fut.result()
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001 - the worker itself failed (killed, unpicklable, ...)
            return fault_document(job, f"Grader fault (worker: {type(exc).__name__}): {exc}")

    def cancel(self) -> list[tuple[int, dict]]:
        """SIGTERM every worker (each cleans up its sandbox), drop queued jobs, and return the jobs
        that finished before they stopped but were not yielded."""
        if self._pool is None:
            return []
        # No Future.cancel() here: the pool's manager thread, seeing its workers gone, sets
        # BrokenProcessPool on every pending future, and on one cancelled meanwhile that raises
        # InvalidStateError in that thread (a traceback on Ctrl-C). A queued job never runs anyway:
        # a stopped worker exits, and one told to stop returns None for any job (``_pool_grade``).
        processes = list((getattr(self._pool, "_processes", None) or {}).values())  # no public API lists them
        for proc in processes:
            try:
                os.kill(proc.pid, signal.SIGTERM)
            except (ProcessLookupError, PermissionError):
                pass
        deadline = time.monotonic() + STOP_GRACE_S
        for proc in processes:
            proc.join(timeout=max(0.0, deadline - time.monotonic()))
            if proc.is_alive():  # stuck past the grace period: the sandbox's own deadline still applies
                proc.kill()
                proc.join(timeout=1)
        self.close()
        if self.warm:
            _sweep_dead_workers_folders()
        late = []
        for fut, index in self._futures.items():
            if fut in self._seen or not fut.done() or fut.cancelled() or fut.exception() is not None:
                continue
            if fut.result() is not None:
                late.append((index, fut.result()))
        return late

    def close(self) -> None:
        """Shut the worker processes down (waits for them; queued jobs are dropped) and discard this
        process's warm pool, if it had one."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
        self._close_pool()

    def _close_pool(self) -> None:
        from grader.sandbox import pool as pool_mod  # noqa: PLC0415

        if self.pool is not None and not self.pool.closed:
            self.pool.close()
            if pool_mod.installed() is self.pool:
                pool_mod.install(None)


def make_executor(*, jobs: int = 1, ray: str | None = None, sandbox: str = "auto", require_isolation: bool = False,
                  build_image: bool = False, warm: dict | None = None) -> Executor:
    """The executor for ``grade batch``: ``RayExecutor`` when ``ray`` is an address (or ``local``: an
    embedded Ray of ``jobs`` slots), else ``LocalExecutor(jobs, warm=warm)``. Ray is imported only in
    the first case (its nodes grade cold: ``warm`` applies to local workers).

    Raises:
        grader.cohort.ray_executor.RayUnavailable: Ray is asked for but not installed or unreachable.
        grader.cohort.ray_executor.NodeRefused: a node of the cluster disagrees with this machine.
    """
    if ray:
        from grader.cohort.ray_executor import RayExecutor  # noqa: PLC0415 - optional dependency

        return RayExecutor(ray, jobs=jobs, sandbox=sandbox, require_isolation=require_isolation,
                           build_image=build_image)
    return LocalExecutor(jobs, warm=warm, sandbox=sandbox, require_isolation=require_isolation)
