"""``grade batch``: grade every submission under a folder, several sandboxes at once.

Layouts (``discover``):

* ``DIR/<candidate>/<exercise>.py`` (a folder per candidate),
* ``DIR/<exercise>/<candidate>.py`` (a folder per exercise, named by an exercise id),
* ``DIR/<candidate>.py`` with ``exercise=ID`` (a flat folder of one exercise).

Each submission's interviewer-view scorecard is written to ``OUT/<exercise>/<candidate>.json`` by the
worker that graded it, as soon as it is graded (atomically), so an interrupted batch keeps every
finished scorecard and a rerun skips them: a submission is *current* when its scorecard records the
same sha256, exercise version and grader version, and was not an ``infrastructure_error`` (the
grader's own faults are retried). ``summary.csv`` is rewritten at the end from the scorecards.

Workers are processes (``spawn``): grading in the process backend waits on a subprocess, the
reference runs on the host, and each worker keeps its own imports and torch dispatch state. On
Ctrl-C the workers are told to stop (SIGTERM, turned into ``KeyboardInterrupt`` inside the worker),
so the sandbox backend's own cleanup kills the running submission (its whole process group, or
its container); queued submissions never start.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import signal
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterable

from grader import __version__
from grader.grading.exercise import Exercise, exercise_ids, get_exercise
from grader.cohort.exports import export_text, summary_row, to_csv, to_gradescope
from grader.grading.scorecard import CheckResult, Scorecard, read_scorecard, write_scorecard
from grader.judge.verdicts import Status, Verdict

SKIP_DIRS = {"__pycache__"}


@dataclass(frozen=True)
class BatchItem:
    """One submission of a batch.

    Attributes:
        candidate: who wrote it (a folder or file name).
        exercise: exercise id.
        path: the Python file.
    """

    candidate: str
    exercise: str
    path: Path

    def scorecard_path(self, out: Path) -> Path:
        """Where its scorecard goes: ``OUT/<exercise>/<candidate>.json``."""
        return Path(out) / self.exercise / f"{self.candidate}.json"


@dataclass
class Discovery:
    """What ``discover`` found: the submissions, and files it ignored with the reason."""

    items: list[BatchItem] = field(default_factory=list)
    ignored: list[tuple[Path, str]] = field(default_factory=list)


@dataclass(frozen=True)
class BatchOutcome:
    """One submission's result in a batch run.

    Attributes:
        item: the submission.
        scorecard: its scorecard path.
        status: the scorecard's status.
        score / max_score: points.
        all_passed: graded, and every check passed.
        skipped: not graded this run: its scorecard was current (resume).
    """

    item: BatchItem
    scorecard: Path
    status: str
    score: float
    max_score: float
    all_passed: bool
    skipped: bool = False


@dataclass
class BatchResult:
    """A batch run: outcomes in discovery order, the summary file, and whether it was interrupted."""

    outcomes: list[BatchOutcome]
    summary: Path
    interrupted: bool = False
    ignored: list[tuple[Path, str]] = field(default_factory=list)
    exports: list[Path] = field(default_factory=list)


def default_jobs() -> int:
    """Parallel sandboxes by default: the cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def _py_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix == ".py" and not p.name.startswith("."))


def discover(root: Path, *, exercise: str | None = None, known: Iterable[str] | None = None) -> Discovery:
    """Find the submissions under ``root`` (see the module docstring for the layouts).

    Args:
        root: the batch folder.
        exercise: every ``*.py`` directly in ``root`` is a submission of this exercise.
        known: exercise ids (default: every exercise).

    Raises:
        NotADirectoryError: ``root`` is not a folder.
    """
    root = Path(root)
    if not root.is_dir():
        raise NotADirectoryError(f"{root} is not a folder")
    found = Discovery()
    if exercise is not None:
        found.items = [BatchItem(p.stem, exercise, p) for p in _py_files(root)]
        return found
    known = set(known if known is not None else exercise_ids())
    for entry in sorted(root.iterdir()):
        if entry.name.startswith(".") or entry.name in SKIP_DIRS:
            continue
        if entry.is_file():
            if entry.suffix == ".py":
                found.ignored.append((entry, "a file at the top of a batch folder needs --exercise"))
            continue
        if entry.name in known:  # DIR/<exercise>/<candidate>.py
            found.items += [BatchItem(p.stem, entry.name, p) for p in _py_files(entry)]
            continue
        for p in _py_files(entry):  # DIR/<candidate>/<exercise>.py
            if p.stem in known:
                found.items.append(BatchItem(entry.name, p.stem, p))
            else:
                found.ignored.append((p, f"no exercise is named {p.stem!r}"))
    return found


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def is_current(item: BatchItem, card_path: Path, exercise_version: str | None) -> bool:
    """Whether ``card_path`` already grades this very file with this exercise and grader version."""
    try:
        card = read_scorecard(card_path)
        digest = sha256_file(item.path)
    except Exception:  # noqa: BLE001 - unreadable, invalid or missing: grade again
        return False
    return (card.submission.get("sha256") == digest and card.exercise.get("version") == exercise_version
            and card.grader_version == __version__ and card.status != Status.INFRASTRUCTURE_ERROR)


def infrastructure_card(exercise: Exercise | None, exercise_id: str, path: Path, message: str,
                        seed: int | None = None) -> Scorecard:
    """A scorecard saying the grader failed on this submission (never charged to the candidate)."""
    try:
        digest = sha256_file(path)
    except OSError:
        digest = None
    checks = tuple(CheckResult(id=c.id, title=c.title, category=c.category, visibility=c.visibility,
                               verdict=str(Verdict.SKIPPED), points=0.0, max_points=c.points,
                               message=f"Not graded: {message}") for c in (exercise.checks if exercise else ()))
    from grader.grading.grade import environment  # noqa: PLC0415 - heavy import, only on this path

    return Scorecard(
        exercise={"id": exercise_id, "version": exercise.version if exercise else "unknown",
                  "title": exercise.title if exercise else exercise_id},
        submission={"path": str(path), "sha256": digest},
        sandbox={"backend": "none", "image": None, "isolation": {}, "limits": {}},
        environment=environment(), started_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        duration_s=0.0, status=str(Status.INFRASTRUCTURE_ERROR), status_message=message, score=0.0,
        max_score=float(exercise.max_score) if exercise else 0.0, checks=checks,
        output={"text": "", "truncated": False}, seed=seed, grader_version=__version__)


# -- the work of one submission (runs in a worker process, or inline for --jobs 1) -------------------

_STOPPING = False


def _stop_worker(_signum, _frame) -> None:
    global _STOPPING  # noqa: PLW0603 - the one flag a signal handler may set
    if not _STOPPING:
        _STOPPING = True
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise KeyboardInterrupt


def _worker_init() -> None:
    """Workers leave Ctrl-C to the parent, which stops them with SIGTERM (see the module docstring)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _stop_worker)


def grade_one(candidate: str, exercise_id: str, path: str, card_path: str, *, sandbox: str, seed: int | None,
              require_isolation: bool = False) -> dict | None:
    """Grade one file and write its interviewer-view scorecard; a grader fault of any kind becomes an
    ``infrastructure_error`` scorecard. Returns the summary fields, or None when told to stop."""
    if _STOPPING:
        return None
    exercise = None
    try:
        from grader.grading.grade import grade_submission  # noqa: PLC0415 - imported in the worker

        exercise = get_exercise(exercise_id)
        card = grade_submission(exercise, path, sandbox=sandbox, seed=seed, require_isolation=require_isolation)
    except Exception as exc:  # noqa: BLE001 - one broken submission never stops the batch
        card = infrastructure_card(exercise, exercise_id, Path(path), f"Grader fault ({type(exc).__name__}): {exc}",
                                   seed)
    write_scorecard(card, Path(card_path))
    return {"status": card.status, "score": card.score, "max_score": card.max_score, "all_passed": card.all_passed}


def _outcome(item: BatchItem, card_path: Path, fields: dict, skipped: bool) -> BatchOutcome:
    return BatchOutcome(item=item, scorecard=card_path, status=fields["status"], score=fields["score"],
                        max_score=fields["max_score"], all_passed=fields["all_passed"], skipped=skipped)


def write_summary(items: Iterable[BatchItem], out: Path) -> Path:
    """Write ``OUT/summary.csv`` from the scorecards on disk (items without one are left out)."""
    rows = []
    for item in items:
        card_path = item.scorecard_path(out)
        try:
            card = read_scorecard(card_path)
        except Exception:  # noqa: BLE001 - not graded (interrupted) or unreadable: not in the summary
            continue
        rows.append(summary_row(item.candidate, card, str(card_path.relative_to(out))))
    path = Path(out) / "summary.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(to_csv(rows), encoding="utf-8")
    return path


def write_exports(items: Iterable[BatchItem], out: Path, formats: Iterable[str], *,
                  hidden_visibility: str = "after_published") -> list[Path]:
    """Exports of a batch under ``OUT``: ``gradescope/<exercise>/<candidate>.json`` (one results.json per
    submission), ``junit.xml``, ``scorecards.json``; ``csv`` is ``summary.csv`` itself."""
    cards = []
    for item in items:
        try:
            cards.append((item, read_scorecard(item.scorecard_path(out))))
        except Exception:  # noqa: BLE001 - not graded: not exported
            continue
    written = []
    for fmt in dict.fromkeys(formats):
        if fmt == "gradescope":
            for item, card in cards:
                path = Path(out) / "gradescope" / item.exercise / f"{item.candidate}.json"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(json.dumps(to_gradescope(card, hidden_visibility=hidden_visibility), indent=2) + "\n",
                                encoding="utf-8")
                written.append(path)
        elif fmt == "csv":
            written.append(Path(out) / "summary.csv")
        else:
            path = Path(out) / ("junit.xml" if fmt == "junit" else "scorecards.json")
            labelled = [(f"{item.candidate}", card) for item, card in cards]
            text = export_text(fmt, labelled) if fmt == "junit" else json.dumps([c.to_json() for _, c in labelled],
                                                                                  indent=2) + "\n"
            path.write_text(text, encoding="utf-8")
            written.append(path)
    return written


def run_batch(items: list[BatchItem], out: Path, *, jobs: int | None = None, sandbox: str = "auto",
              seed: int | None = None, force: bool = False, require_isolation: bool = False,
              on_start: Callable[[int], None] | None = None,
              on_done: Callable[[BatchOutcome], None] | None = None) -> tuple[list[BatchOutcome], bool]:
    """Grade ``items`` (skipping current scorecards unless ``force``) with ``jobs`` workers.

    Args:
        items: from ``discover``.
        out: the scorecard folder.
        jobs: parallel sandboxes (default ``default_jobs()``); 1 grades in this process.
        sandbox, require_isolation: as for ``grade_submission``.
        seed: hidden-case seed shared by the whole batch (None: one random seed for the batch).
        force: grade even when a current scorecard exists.
        on_start: called once with the number of submissions to grade (after resume skips).
        on_done: called with each outcome (skipped ones first) as it finishes.

    Returns:
        ``(outcomes in the order they finished, interrupted)``.

    Raises:
        KeyboardInterrupt: never; an interrupt stops the batch and is reported as ``interrupted``.
    """
    import secrets  # noqa: PLC0415

    out = Path(out)
    jobs = jobs or default_jobs()
    seed = secrets.randbelow(2**31) if seed is None else int(seed)
    done = on_done or (lambda _o: None)
    outcomes: list[BatchOutcome] = []
    versions: dict[str, str | None] = {}
    todo = []
    for item in items:
        if item.exercise not in versions:
            try:
                versions[item.exercise] = get_exercise(item.exercise).version
            except Exception:  # noqa: BLE001 - reported per submission by grade_one
                versions[item.exercise] = None
        card_path = item.scorecard_path(out)
        if not force and is_current(item, card_path, versions[item.exercise]):
            card = read_scorecard(card_path)
            outcome = _outcome(item, card_path, {"status": card.status, "score": card.score,
                                                 "max_score": card.max_score, "all_passed": card.all_passed}, True)
            outcomes.append(outcome)
            done(outcome)
        else:
            todo.append(item)
    if on_start:
        on_start(len(todo))

    def args(item: BatchItem):
        return (item.candidate, item.exercise, str(item.path), str(item.scorecard_path(out)))

    kwargs = {"sandbox": sandbox, "seed": seed, "require_isolation": require_isolation}
    if jobs == 1 or len(todo) <= 1:
        try:
            for item in todo:
                fields = grade_one(*args(item), **kwargs)
                outcome = _outcome(item, item.scorecard_path(out), fields, False)
                outcomes.append(outcome)
                done(outcome)
        except KeyboardInterrupt:
            return outcomes, True
        return outcomes, False

    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_worker_init)
    futures: dict[Future, BatchItem] = {}
    interrupted = False
    try:
        futures = {pool.submit(grade_one, *args(item), **kwargs): item for item in todo}
        pending = set(futures)
        while pending:
            finished, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
            for fut in finished:
                outcome = _finish(fut, futures[fut], out, kwargs["seed"])
                if outcome is not None:
                    outcomes.append(outcome)
                    done(outcome)
    except KeyboardInterrupt:
        interrupted = True
        for fut in futures:
            fut.cancel()
        _stop_workers(pool)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    if interrupted:  # scorecards that were written before the workers stopped still count
        for fut, item in futures.items():
            if fut.done() and not fut.cancelled() and fut.exception() is None and fut.result():
                if not any(o.item == item for o in outcomes):
                    outcomes.append(_outcome(item, item.scorecard_path(out), fut.result(), False))
    return outcomes, interrupted


def _finish(fut: Future, item: BatchItem, out: Path, seed: int) -> BatchOutcome | None:
    """The outcome of a finished future; a worker that died still leaves a scorecard behind."""
    card_path = item.scorecard_path(out)
    try:
        fields = fut.result()
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - the worker itself failed (killed, unpicklable, ...)
        try:
            exercise = get_exercise(item.exercise)
        except Exception:  # noqa: BLE001
            exercise = None
        card = infrastructure_card(exercise, item.exercise, item.path,
                                   f"Grader fault (worker: {type(exc).__name__}): {exc}", seed)
        write_scorecard(card, card_path)
        fields = {"status": card.status, "score": 0.0, "max_score": card.max_score, "all_passed": False}
    if fields is None:
        return None
    return _outcome(item, card_path, fields, False)


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    """SIGTERM every worker: each turns it into KeyboardInterrupt, so its sandbox is cleaned up."""
    for proc in list(getattr(pool, "_processes", {}).values()):  # no public API lists the workers
        try:
            os.kill(proc.pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            pass
    deadline = time.monotonic() + 30
    for proc in list(getattr(pool, "_processes", {}).values()):
        proc.join(timeout=max(0.0, deadline - time.monotonic()))


def batch(root: Path, out: Path, *, exercise: str | None = None, jobs: int | None = None, sandbox: str = "auto",
          seed: int | None = None, force: bool = False, require_isolation: bool = False,
          formats: Iterable[str] = (), hidden_visibility: str = "after_published",
          on_start: Callable[[int], None] | None = None,
          on_done: Callable[[BatchOutcome], None] | None = None) -> BatchResult:
    """``grade batch``: discover, grade, write ``summary.csv`` and the exports (see ``run_batch``).

    Raises:
        NotADirectoryError: ``root`` is not a folder.
    """
    found = discover(root, exercise=exercise)
    outcomes, interrupted = run_batch(found.items, out, jobs=jobs, sandbox=sandbox, seed=seed, force=force,
                                      require_isolation=require_isolation, on_start=on_start, on_done=on_done)
    summary = write_summary(found.items, out)
    exports = [] if interrupted else write_exports(found.items, out, formats, hidden_visibility=hidden_visibility)
    order = {item: i for i, item in enumerate(found.items)}
    outcomes.sort(key=lambda o: order.get(o.item, len(order)))
    return BatchResult(outcomes=outcomes, summary=summary, interrupted=interrupted, ignored=found.ignored,
                       exports=exports)
