"""``grade batch``: grade every submission under a folder, several sandboxes at once.

Layouts (``discover``):

* ``DIR/<candidate>/<exercise>.py`` (a folder per candidate),
* ``DIR/<exercise>/<candidate>.py`` (a folder per exercise, named by an exercise id),
* ``DIR/<candidate>.py`` with ``exercise=ID`` (a flat folder of one exercise).

A Jupyter notebook (``.ipynb``) stands wherever a ``.py`` may: its code cells are graded
(``grader.grading.notebook``).

Tracks: each submission is graded in the track given by ``track=`` (``--track``), else in the one its
imports name (``import torch`` vs ``import numpy``, read from the AST, never run; see
``grader.grading.exercise.imported_track``), else in the exercise's default track.

Each submission's interviewer-view scorecard is written to ``OUT/<exercise>/<candidate>.json`` as
soon as it is graded (atomically), so an interrupted batch keeps every
finished scorecard and a rerun skips them: a submission is *current* when its scorecard records the
same sha256, exercise version and grader version, and was not an ``infrastructure_error`` (the
grader's own faults are retried). ``summary.csv`` is rewritten at the end from the scorecards.

The grading itself goes through the executor seam (``grader.cohort.executors``): ``grade_one`` per
submission, mapped by a ``LocalExecutor`` (worker processes, the default) or a ``RayExecutor``
(``--ray``); this module only discovers, skips what is current, and writes what comes back. On
Ctrl-C the executor stops its workers so that the sandbox backend's own cleanup kills the running
submission (its whole process group, or its container); queued submissions never start.
"""

from __future__ import annotations

import json
import os
import signal
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from grader import __version__
from grader.grading.exercise import UnknownExercise, exercise_ids, get_exercise, track_for_file
from grader.cohort.executors import (Executor, GradeJob, LocalExecutor, fault_document,
                                     infrastructure_card, sha256_file)
from grader.cohort.exports import export_text, summary_row, to_csv, to_gradescope
from grader.grading.scorecard import Scorecard, read_scorecard, write_scorecard
from grader.judge.verdicts import Status

__all__ = ["BatchItem", "BatchOutcome", "BatchResult", "Discovery", "batch", "default_jobs", "discover",
           "infrastructure_card", "is_current", "run_batch", "sha256_file", "write_exports", "write_summary"]

SKIP_DIRS = {"__pycache__"}


@dataclass(frozen=True)
class BatchItem:
    """One submission of a batch.

    Attributes:
        candidate: who wrote it (a folder or file name).
        exercise: exercise id.
        path: the Python file.
        track: ``numpy`` or ``torch``; None: the exercise's default track.
    """

    candidate: str
    exercise: str
    path: Path
    track: str | None = None

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
    """A batch run: outcomes in discovery order, the summary file, whether it was interrupted, the files
    it ignored (with why), the exports written and the hidden-case seed it graded with."""

    outcomes: list[BatchOutcome]
    summary: Path
    interrupted: bool = False
    ignored: list[tuple[Path, str]] = field(default_factory=list)
    exports: list[Path] = field(default_factory=list)
    seed: int | None = None


def default_jobs() -> int:
    """Parallel sandboxes by default: the cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def _py_files(folder: Path, ignored: list[tuple[Path, str]] | None = None) -> list[Path]:
    """The ``*.py`` files and Jupyter notebooks (``*.ipynb``, graded as their code cells) directly in
    ``folder``; every other visible entry goes to ``ignored`` with why (a notebook beside a ``.py``
    of the same name too: the ``.py`` is graded)."""
    found = []
    entries = sorted(folder.iterdir())
    names = {p.name for p in entries}
    for p in entries:
        if p.name.startswith(".") or p.name in SKIP_DIRS:
            continue
        if p.is_file() and p.suffix == ".py":
            found.append(p)
        elif p.is_file() and p.suffix == ".ipynb" and f"{p.stem}.py" not in names:
            found.append(p)
        elif ignored is not None:
            ignored.append((p, "a folder inside a submission folder" if p.is_dir()
                            else f"{p.stem}.py is graded instead" if p.suffix == ".ipynb"
                            else "not a Python file (a submission ends in .py, or .ipynb for a notebook)"))
    return found


class EmptyCohort(ValueError):
    """``grade batch`` found nothing to grade (a usage error: nothing is written).

    Attributes:
        discovery: what was found, with every ignored file and why.
    """

    def __init__(self, root: Path, discovery: "Discovery"):
        self.discovery = discovery
        why = f"; {len(discovery.ignored)} files ignored" if discovery.ignored else ""
        super().__init__(f"nothing to grade in {root}{why} (layouts: DIR/<candidate>/<exercise>.py, "
                         f"DIR/<exercise>/<candidate>.py, or a flat folder with --exercise ID)")


class SeedConflict(ValueError):
    """``--seed`` differs from the seed recorded in the batch's output folder (a usage error)."""


BATCH_RECORD = "batch.json"


def resolve_seed(out: Path, seed: int | None, *, force: bool = False) -> int:
    """The hidden-case seed of the batch whose output folder is ``out``.

    A batch records its seed in ``OUT/batch.json`` on its first run; a resumed batch reuses it, so
    one cohort is never graded at two seeds (issue #15). A different ``seed`` on a folder that holds
    a record is refused unless ``force`` (which regrades everything at the new seed).

    Args:
        out: the batch's output folder (it need not exist).
        seed: the seed asked for, or None (the recorded one, else a fresh random one).
        force: allow a seed other than the recorded one.

    Returns:
        The seed to grade with (a non-negative int below 2**32).

    Raises:
        SeedConflict: ``seed`` differs from the recorded seed and ``force`` is false.
    """
    import secrets  # noqa: PLC0415

    recorded = None
    try:
        recorded = json.loads((Path(out) / BATCH_RECORD).read_text(encoding="utf-8")).get("seed")
    except (OSError, ValueError, AttributeError):
        recorded = None
    if not isinstance(recorded, int) or isinstance(recorded, bool):
        recorded = None
    if seed is None:
        return recorded if recorded is not None else secrets.randbelow(2**31)
    if recorded is not None and seed != recorded and not force:
        raise SeedConflict(f"{out} was graded with --seed {recorded}; grading it again with --seed {seed} would "
                           f"mix two seeds in one cohort (add --force to regrade everything at {seed})")
    return int(seed)


def record_seed(out: Path, seed: int, root: Path | None = None, exercise: str | None = None) -> Path:
    """Write ``OUT/batch.json`` holding the batch's seed (see ``resolve_seed``) and, when given, the
    absolute path of the submissions folder and the ``--exercise`` of a flat folder (what ``grade
    regrade`` reads to find the submissions again). Other keys already there (the regrades of
    ``grader.cohort.regrade``) are kept."""
    path = Path(out) / BATCH_RECORD
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        record = {}
    record = record if isinstance(record, dict) else {}
    record.update({"seed": int(seed), "grader_version": __version__})
    if root is not None:
        record["root"] = str(Path(root).resolve())
        record["exercise"] = exercise
    path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return path


def discover(root: Path, *, exercise: str | None = None, known: Iterable[str] | None = None,
             track: str | None = None) -> Discovery:
    """Find the submissions under ``root`` (see the module docstring for the layouts).

    Args:
        root: the batch folder.
        exercise: every ``*.py`` directly in ``root`` is a submission of this exercise.
        known: exercise ids (default: every exercise).
        track: grade every submission in this track (submissions of an exercise without it are
            ignored, with the reason); None: each file's imports choose (see the module docstring).

    Raises:
        NotADirectoryError: ``root`` is not a folder.
    """
    root = Path(root)
    if not root.is_dir():
        raise NotADirectoryError(f"{root} is not a folder")
    found = Discovery()
    if exercise is not None:
        found.items = [BatchItem(p.stem, exercise, p) for p in _py_files(root, found.ignored)]
        return _with_tracks(found, track)
    known = set(known if known is not None else exercise_ids())
    for entry in sorted(root.iterdir()):
        if entry.name.startswith(".") or entry.name in SKIP_DIRS:
            continue
        if entry.is_file():
            found.ignored.append((entry, "a file at the top of a batch folder needs --exercise"
                                  if entry.suffix == ".py" else "not a folder of submissions"))
            continue
        if entry.name in known:  # DIR/<exercise>/<candidate>.py
            found.items += [BatchItem(p.stem, entry.name, p) for p in _py_files(entry, found.ignored)]
            continue
        for p in _py_files(entry, found.ignored):  # DIR/<candidate>/<exercise>.py
            if p.stem in known:
                found.items.append(BatchItem(entry.name, p.stem, p))
            else:
                found.ignored.append((p, f"no exercise is named {p.stem!r}"))
    return _with_tracks(found, track)


def _with_tracks(found: Discovery, track: str | None) -> Discovery:
    """Give each item its track: ``track`` when given (items of exercises without it are ignored),
    else the one the file's imports name when the exercise has it, else None (the default)."""
    tracks: dict[str, tuple[str, ...]] = {}
    items = []
    for item in found.items:
        if track is None:
            items.append(BatchItem(item.candidate, item.exercise, item.path, track_for_file(item.exercise, item.path)))
            continue
        if item.exercise not in tracks:
            try:
                tracks[item.exercise] = get_exercise(item.exercise).tracks
            except UnknownExercise:
                tracks[item.exercise] = ()
            except Exception:  # noqa: BLE001 - a broken exercise is reported per submission by grade_one
                tracks[item.exercise] = (track,)
        if track in tracks[item.exercise]:
            items.append(BatchItem(item.candidate, item.exercise, item.path, track))
        else:
            found.ignored.append((item.path, f"exercise {item.exercise!r} has no {track} track"))
    found.items = items
    return found


def is_current(item: BatchItem, card_path: Path, exercise_version: str | None, track: str | None = None) -> bool:
    """Whether ``card_path`` already grades this very file with this exercise version, track (when
    given; a card written before tracks existed records none and is graded again) and grader version."""
    try:
        card = read_scorecard(card_path)
        digest = sha256_file(item.path)
    except Exception:  # noqa: BLE001 - unreadable, invalid or missing: grade again
        return False
    if track is not None and card.exercise.get("track") != track:
        return False
    return (card.submission.get("sha256") == digest and card.exercise.get("version") == exercise_version
            and card.grader_version == __version__ and card.status != Status.INFRASTRUCTURE_ERROR)


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
              on_done: Callable[[BatchOutcome], None] | None = None,
              executor: Executor | None = None, warm: dict | None = None) -> tuple[list[BatchOutcome], bool]:
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
        executor: who grades (``grader.cohort.executors``); default ``LocalExecutor(jobs, warm=warm)``.
            It is closed before this returns.
        warm: for the default executor: sandboxes each grading process keeps started ahead, by
            runtime (``{"numpy": n, "torch": m}``, ``grader.sandbox.pool``); None: all cold.

    Returns:
        ``(outcomes in the order they finished, interrupted)``.

    Raises:
        KeyboardInterrupt: never; an interrupt stops the batch and is reported as ``interrupted``.
    """
    import secrets  # noqa: PLC0415

    out = Path(out)
    seed = secrets.randbelow(2**31) if seed is None else int(seed)
    executor = executor if executor is not None else LocalExecutor(jobs or default_jobs(), warm=warm, sandbox=sandbox,
                                                                   require_isolation=require_isolation)
    done = on_done or (lambda _o: None)
    outcomes: list[BatchOutcome] = []
    versions: dict[tuple, tuple[str | None, str | None]] = {}
    todo = []
    for item in items:
        key = (item.exercise, item.track)
        if key not in versions:
            try:
                ex = get_exercise(item.exercise, track=item.track)
                versions[key] = (ex.version, ex.track)
            except Exception:  # noqa: BLE001 - reported per submission by grade_one
                versions[key] = (None, None)
        card_path = item.scorecard_path(out)
        if not force and is_current(item, card_path, *versions[key]):
            card = read_scorecard(card_path)
            outcome = _outcome(item, card_path, {"status": card.status, "score": card.score,
                                                 "max_score": card.max_score, "all_passed": card.all_passed}, True)
            outcomes.append(outcome)
            done(outcome)
        else:
            todo.append(item)
    if on_start:
        on_start(len(todo))

    grade_jobs = [GradeJob(exercise=item.exercise, path=str(item.path), seed=seed, sandbox=sandbox, track=item.track,
                           require_isolation=require_isolation) for item in todo]

    def record(index: int, doc: dict) -> BatchOutcome:
        item, job = todo[index], grade_jobs[index]
        card_path = item.scorecard_path(out)
        try:
            card = Scorecard.from_json(doc)
            if card.status != Status.INFRASTRUCTURE_ERROR or not _graded_card_at(card_path):
                write_scorecard(card, card_path)  # a grader fault never replaces a graded scorecard
        except (OSError, KeyboardInterrupt):
            raise
        except Exception as exc:  # noqa: BLE001 - an invalid document is the grader's fault
            card = Scorecard.from_json(fault_document(job, f"Grader fault (scorecard: {type(exc).__name__}): {exc}"))
            if not _graded_card_at(card_path):
                write_scorecard(card, card_path)
        outcome = _outcome(item, card_path, {"status": card.status, "score": card.score,
                                             "max_score": card.max_score, "all_passed": card.all_passed}, False)
        outcomes.append(outcome)
        done(outcome)
        return outcome

    interrupted = False
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, _interrupt_once) if main_thread else None
    try:
        try:
            for index, doc in executor.imap_unordered(grade_jobs):
                record(index, doc)
        except KeyboardInterrupt:
            interrupted = True
            if main_thread:  # a second Ctrl-C must not cut the clean-up short
                signal.signal(signal.SIGINT, signal.SIG_IGN)
            for index, doc in executor.cancel():  # finished before the workers stopped: still counts
                record(index, doc)
        finally:
            executor.close()
    finally:
        if main_thread:
            signal.signal(signal.SIGINT, previous)
    return outcomes, interrupted


def _interrupt_once(_signum, _frame) -> None:
    """SIGINT during a batch: one ``KeyboardInterrupt`` in the main thread, then Ctrl-C is ignored
    until the executor has stopped its workers (and their sandboxes) and the summary is written."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise KeyboardInterrupt


def _graded_card_at(path: Path) -> bool:
    """Whether ``path`` holds a valid scorecard that is not an ``infrastructure_error``."""
    try:
        return read_scorecard(path).status != Status.INFRASTRUCTURE_ERROR
    except Exception:  # noqa: BLE001 - missing, unreadable or invalid: nothing to keep
        return False


def batch(root: Path, out: Path, *, exercise: str | None = None, jobs: int | None = None, sandbox: str = "auto",
          seed: int | None = None, force: bool = False, require_isolation: bool = False,
          formats: Iterable[str] = (), hidden_visibility: str = "after_published",
          on_start: Callable[[int], None] | None = None,
          on_done: Callable[[BatchOutcome], None] | None = None, executor: Executor | None = None,
          track: str | None = None, warm: dict | None = None) -> BatchResult:
    """``grade batch``: discover, grade, write ``summary.csv`` and the exports (see ``run_batch``;
    ``executor`` says who grades, default ``LocalExecutor(jobs, warm=warm)``; ``track`` as in ``discover``).

    Nothing is written before the cohort and the seed are known to be valid. The seed is recorded in
    ``OUT/batch.json`` and reused on resume (``resolve_seed``). ``summary.csv`` is written for what
    finished, also when the batch is interrupted.

    Raises:
        NotADirectoryError: ``root`` is not a folder.
        EmptyCohort: nothing to grade under ``root`` (nothing is written).
        SeedConflict: ``seed`` differs from the one recorded in ``out`` and ``force`` is false.
    """
    found = discover(root, exercise=exercise, track=track)
    if not found.items:
        if executor is not None:
            executor.close()
        raise EmptyCohort(root, found)
    seed = resolve_seed(out, seed, force=force)
    record_seed(out, seed, root, exercise)
    outcomes: list[BatchOutcome] = []
    interrupted = False
    try:
        outcomes, interrupted = run_batch(found.items, out, jobs=jobs, sandbox=sandbox, seed=seed, force=force,
                                          require_isolation=require_isolation, on_start=on_start,
                                          on_done=on_done, executor=executor, warm=warm)
    except KeyboardInterrupt:
        interrupted = True
    summary = write_summary(found.items, out)
    exports = [] if interrupted else write_exports(found.items, out, formats, hidden_visibility=hidden_visibility)
    order = {item: i for i, item in enumerate(found.items)}
    outcomes.sort(key=lambda o: order.get(o.item, len(order)))
    return BatchResult(outcomes=outcomes, summary=summary, interrupted=interrupted, ignored=found.ignored,
                       exports=exports, seed=seed)
