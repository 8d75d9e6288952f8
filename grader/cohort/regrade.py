"""``grade regrade``: grade a batch's submissions again with the current grader, keep both scorecards,
say what changed, and let the interviewer choose which one stands.

After a fix to the grader or an exercise (a new ``grader_version`` or ``exercise_version``), the
scorecards of a round were produced by the old one. ``regrade_batch`` grades every submission that
has a scorecard in a ``grade batch`` output folder ``OUT`` again, at the seed recorded in
``OUT/batch.json`` (one round is never graded at two seeds) and in the track its scorecard records,
and writes, without touching any existing file::

    OUT/.regrades/<tag>/before/<exercise>/<candidate>.json   the scorecard that stood (a copy)
    OUT/.regrades/<tag>/after/<exercise>/<candidate>.json    the new one
    OUT/.regrades/<tag>/changes.csv, changes.json            what changed per candidate

``<tag>`` is the UTC time and the grader version (``20261201T211500Z-0.1.0``). The folder is
hidden, so ``grade review OUT`` and ``grade report OUT`` keep reading only the scorecards that stand
(``OUT/<exercise>/<candidate>.json``). ``accept(OUT, tag)`` makes a regrade's scorecards stand: each
is copied to ``OUT/<exercise>/<candidate>.json`` (what stood there is in that regrade's ``before``),
``summary.csv`` is rewritten, and ``batch.json`` records ``standing``; ``accept(OUT, "original")``
puts back the scorecards that stood before the first regrade. Nothing is deleted: every scorecard
ever written stays under ``.regrades``, and ``batch.json`` lists every regrade.

A submission is regraded only when its file still has the sha256 its scorecard records (the file
graded is the file regraded); one that changed or disappeared is listed as not regraded, with why.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from grader import __version__
from grader.cohort.batch import BATCH_RECORD, BatchItem, discover, write_summary
from grader.cohort.executors import Executor, GradeJob, LocalExecutor, fault_document, sha256_file
from grader.cohort.review import diff_scorecards
from grader.grading.scorecard import Scorecard, read_scorecard, write_scorecard
from grader.judge.verdicts import Status

REGRADES = ".regrades"
ORIGINAL = "original"


class RegradeRefused(ValueError):
    """The folder cannot be regraded (no batch record, no seed, no submissions folder): a usage error."""


@dataclass(frozen=True)
class Change:
    """What a regrade changed for one submission.

    Attributes:
        candidate / exercise: whose and which.
        status_before / status_after: scorecard statuses.
        score_before / score_after / max_score: points (``max_score`` of the new scorecard).
        checks: ``(check id, verdict before, verdict after)`` for every check whose verdict changed
            (None where a check is new or gone).
        notes: exercise or grader version changes, from ``grader.cohort.review.diff_scorecards``.
    """

    candidate: str
    exercise: str
    status_before: str
    status_after: str
    score_before: float
    score_after: float
    max_score: float
    checks: tuple[tuple[str, str | None, str | None], ...]
    notes: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        """Whether the score, the status or any check's verdict changed."""
        return bool(self.checks) or self.score_before != self.score_after or self.status_before != self.status_after

    def to_json(self) -> dict:
        """A row of ``changes.json`` and of the service's API."""
        return {"candidate": self.candidate, "exercise": self.exercise, "changed": self.changed,
                "status_before": self.status_before, "status_after": self.status_after,
                "score_before": self.score_before, "score_after": self.score_after, "max_score": self.max_score,
                "checks": [{"id": c, "before": b, "after": a} for c, b, a in self.checks], "notes": list(self.notes)}


def compare(candidate: str, before: Scorecard, after: Scorecard) -> Change:
    """The change from ``before`` (the scorecard that stood) to ``after`` (the regrade) of one submission."""
    diff = diff_scorecards(("before", before), ("after", after))
    checks = tuple((c.check, c.before, c.after) for c in diff.changes if c.before != c.after)
    notes = tuple(n for n in diff.notes if not n.startswith("same file"))
    return Change(candidate, after.exercise["id"], before.status, after.status, before.score, after.score,
                  after.max_score, checks, notes)


def changes_csv(changes: list[Change]) -> str:
    """The change table as CSV: one row per submission (``checks`` as ``id: before -> after; ...``)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["candidate", "exercise", "changed", "status_before", "status_after", "score_before",
                     "score_after", "max_score", "checks_changed", "notes"])
    for c in changes:
        writer.writerow([_cell(c.candidate), c.exercise, "yes" if c.changed else "no", c.status_before, c.status_after,
                         f"{c.score_before:g}", f"{c.score_after:g}", f"{c.max_score:g}",
                         "; ".join(f"{cid}: {b} -> {a}" for cid, b, a in c.checks), "; ".join(c.notes)])
    return buf.getvalue()


def _cell(text: str) -> str:
    """A CSV cell a spreadsheet will not run as a formula (OWASP CSV injection)."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


@dataclass
class RegradeResult:
    """A regrade of a batch folder.

    Attributes:
        tag: the regrade's name (``OUT/.regrades/<tag>``).
        folder: ``OUT/.regrades/<tag>``.
        seed: the batch's seed, used again.
        changes: one per regraded submission, in discovery order.
        not_regraded: ``(exercise/candidate, why)`` for scorecards whose file changed or is gone.
        interrupted: Ctrl-C stopped it (what finished is kept, nothing stands until accepted).
    """

    tag: str
    folder: Path
    seed: int
    changes: list[Change] = field(default_factory=list)
    not_regraded: list[tuple[str, str]] = field(default_factory=list)
    interrupted: bool = False


def read_record(out: Path) -> dict:
    """``OUT/batch.json`` as a dict.

    Raises:
        RegradeRefused: missing, unreadable, or without an integer seed.
    """
    path = Path(out) / BATCH_RECORD
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RegradeRefused(f"{out} is not a grade batch output folder: cannot read {path} ({exc})") from None
    if not isinstance(record, dict) or not isinstance(record.get("seed"), int) or isinstance(record.get("seed"), bool):
        raise RegradeRefused(f"{path} records no seed: regrading needs the batch's seed")
    return record


def _write_record(out: Path, record: dict) -> None:
    path = Path(out) / BATCH_RECORD
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)


def new_tag(out: Path, now: datetime | None = None) -> str:
    """A fresh regrade name: ``<UTC time>-<grader version>``, with ``-2``, ``-3``... if taken."""
    moment = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    base = f"{moment.strftime('%Y%m%dT%H%M%SZ')}-{__version__}"
    tag, n = base, 1
    while (Path(out) / REGRADES / tag).exists():
        n += 1
        tag = f"{base}-{n}"
    return tag


def regrade_batch(out: Path, *, source_root: Path | None = None, jobs: int = 1, sandbox: str = "auto",
                  require_isolation: bool = False, executor: Executor | None = None,
                  now: datetime | None = None,
                  on_done: Callable[[Change], None] | None = None) -> RegradeResult:
    """Regrade every submission with a scorecard in the batch folder ``out`` (see the module docstring).

    Args:
        out: a ``grade batch`` output folder (holding ``batch.json``).
        source_root: the folder of submissions; default the ``root`` recorded in ``batch.json``.
        jobs, sandbox, require_isolation, executor: as for ``grader.cohort.batch.run_batch``.
        now: the regrade's time (tests inject it).
        on_done: called with each submission's change as it is regraded.

    Returns:
        The result; nothing that stands is changed (see ``accept``).

    Raises:
        RegradeRefused: no batch record or seed, no known submissions folder, or nothing to regrade.
    """
    out = Path(out)
    record = read_record(out)
    root = Path(source_root) if source_root is not None else (Path(record["root"]) if record.get("root") else None)
    if root is None:
        raise RegradeRefused(f"{out / BATCH_RECORD} does not say where the submissions are (a batch graded before "
                             f"regrade existed): give the folder with --from DIR")
    if not root.is_dir():
        raise RegradeRefused(f"the submissions folder {root} is not a folder")
    found = discover(root, exercise=record.get("exercise"))
    seed = int(record["seed"])
    now = now or datetime.now(timezone.utc)
    tag = new_tag(out, now)
    folder = out / REGRADES / tag
    result = RegradeResult(tag=tag, folder=folder, seed=seed)
    todo: list[tuple[BatchItem, Scorecard]] = []
    for item in found.items:
        label = f"{item.exercise}/{item.candidate}"
        try:
            standing = read_scorecard(item.scorecard_path(out))
        except Exception:  # noqa: BLE001 - not graded in this batch yet: grade batch grades it, not regrade
            continue
        try:
            same = sha256_file(item.path) == standing.submission.get("sha256")
        except OSError as exc:
            result.not_regraded.append((label, f"cannot read {item.path}: {exc.strerror or exc}"))
            continue
        if not same:
            result.not_regraded.append((label, f"{item.path} changed since it was graded (its sha256 differs)"))
            continue
        todo.append((item, standing))
    if not todo:
        raise RegradeRefused(f"nothing to regrade in {out}: no scorecard whose file is in {root} unchanged")
    for item, standing in todo:
        _copy(standing, folder / "before" / item.exercise / f"{item.candidate}.json")
    jobs_ = [GradeJob(exercise=item.exercise, path=str(item.path), seed=seed, sandbox=sandbox,
                      track=standing.exercise.get("track"), require_isolation=require_isolation)
             for item, standing in todo]
    executor = executor if executor is not None else LocalExecutor(jobs)
    by_index: dict[int, Change] = {}
    try:
        try:
            for index, doc in executor.imap_unordered(jobs_):
                by_index[index] = _record(folder, todo[index], jobs_[index], doc, on_done)
        except KeyboardInterrupt:
            result.interrupted = True
            for index, doc in executor.cancel():
                by_index[index] = _record(folder, todo[index], jobs_[index], doc, on_done)
    finally:
        executor.close()
    result.changes = [by_index[i] for i in sorted(by_index)]
    (folder / "changes.csv").write_text(changes_csv(result.changes), encoding="utf-8")
    (folder / "changes.json").write_text(json.dumps({"tag": tag, "seed": seed, "grader_version": __version__,
                                                      "changes": [c.to_json() for c in result.changes],
                                                      "not_regraded": [list(x) for x in result.not_regraded]},
                                                     indent=2) + "\n", encoding="utf-8")
    record = read_record(out)  # again: keep whatever another writer added meanwhile
    record.setdefault("standing", ORIGINAL)
    record.setdefault("regrades", []).append({
        "tag": tag, "at": now.isoformat(timespec="seconds"),
        "grader_version": __version__, "seed": seed, "regraded": len(result.changes),
        "changed": sum(1 for c in result.changes if c.changed), "interrupted": result.interrupted})
    _write_record(out, record)
    return result


def _record(folder: Path, entry: tuple[BatchItem, Scorecard], job: GradeJob, doc: dict,
            on_done: Callable[[Change], None] | None) -> Change:
    item, standing = entry
    try:
        card = Scorecard.from_json(doc)
    except Exception as exc:  # noqa: BLE001 - an invalid document is the grader's fault
        card = Scorecard.from_json(fault_document(job, f"Grader fault (scorecard: {type(exc).__name__}): {exc}"))
    write_scorecard(card, folder / "after" / item.exercise / f"{item.candidate}.json")
    change = compare(item.candidate, standing, card)
    if on_done:
        on_done(change)
    return change


def _copy(card: Scorecard, path: Path) -> None:
    if path.exists():
        raise FileExistsError(f"{path} exists: a regrade never overwrites a scorecard")
    write_scorecard(card, path)


def regrade_tags(out: Path) -> list[str]:
    """The regrades recorded in ``OUT/batch.json``, oldest first."""
    return [r["tag"] for r in read_record(out).get("regrades", []) if isinstance(r, dict) and "tag" in r]


def accept(out: Path, tag: str) -> list[Path]:
    """Make the scorecards of regrade ``tag`` stand (or ``"original"``: those that stood before the
    first regrade): copy each to ``OUT/<exercise>/<candidate>.json``, rewrite ``summary.csv``, record
    ``standing`` in ``batch.json``. What stood is never lost: it is in a regrade's ``before`` folder.
    A regrade's ``infrastructure_error`` scorecard (the grader's fault) is never made to stand: the
    scorecard there stays.

    Returns:
        The scorecards that now stand, changed by this call.

    Raises:
        RegradeRefused: ``tag`` is not a regrade of ``out`` (nor ``original`` with a regrade to undo).
    """
    out = Path(out)
    record = read_record(out)
    tags = regrade_tags(out)
    if tag == ORIGINAL:
        if not tags:
            raise RegradeRefused(f"{out} has no regrade: the original scorecards already stand")
        source = out / REGRADES / tags[0] / "before"
    elif tag in tags:
        source = out / REGRADES / tag / "after"
    else:
        raise RegradeRefused(f"{out} has no regrade {tag!r}; its regrades: {', '.join(tags) or 'none'}")
    written = []
    for card_path in sorted(source.glob("*/*.json")):
        target = out / card_path.parent.name / card_path.name
        if target.exists() and target.read_bytes() == card_path.read_bytes():
            continue
        if _is_fault(card_path):  # a grader fault of the regrade never replaces a scorecard
            continue
        _keep_standing(out, target, tags)
        tmp = target.with_name(f".{target.name}.accept")
        shutil.copyfile(card_path, tmp)
        tmp.replace(target)
        written.append(target)
    items = [BatchItem(p.stem, p.parent.name, p) for p in sorted(out.glob("*/*.json"))
             if not p.parent.name.startswith(".") and p.parent.name != "gradescope"]
    write_summary(items, out)
    record = read_record(out)
    record["standing"] = tag
    record.setdefault("accepted", []).append({"tag": tag, "at": datetime.now(timezone.utc).isoformat(timespec="seconds")})
    _write_record(out, record)
    return written


def _is_fault(path: Path) -> bool:
    try:
        return read_scorecard(path).status == Status.INFRASTRUCTURE_ERROR
    except Exception:  # noqa: BLE001 - unreadable: not a scorecard to make stand
        return True


def _keep_standing(out: Path, target: Path, tags: list[str]) -> None:
    """Before ``target`` is replaced, make sure a copy of it is under some regrade's folder (it normally
    is: the ``before`` of the regrade that first saw it, or the ``after`` of the one that wrote it);
    otherwise (a scorecard that ``grade batch`` wrote after the last regrade) keep it in
    ``.regrades/replaced/<time>/``."""
    if not target.exists():
        return
    data = target.read_bytes()
    rel = Path(target.parent.name) / target.name
    for tag in tags:
        for side in ("before", "after"):
            copy = out / REGRADES / tag / side / rel
            if copy.exists() and copy.read_bytes() == data:
                return
    keep = out / REGRADES / "replaced" / datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ") / rel
    keep.parent.mkdir(parents=True, exist_ok=True)
    keep.write_bytes(data)


def render_changes(changes: list[Change], console, *, only_changed: bool = False) -> None:
    """Print the change table: candidate, exercise, status, score before -> after, checks that changed."""
    from rich.table import Table  # noqa: PLC0415
    from rich.text import Text  # noqa: PLC0415

    table = Table(show_lines=False)
    for column in ("candidate", "exercise", "status", "score", "checks that changed verdict"):
        table.add_column(column)
    for c in changes:
        if only_changed and not c.changed:
            continue
        delta = c.score_after - c.score_before
        style = "green" if delta > 0 else ("red" if delta < 0 else "")
        status = c.status_after if c.status_before == c.status_after else f"{c.status_before} -> {c.status_after}"
        score = f"{c.score_before:g} -> {c.score_after:g} / {c.max_score:g}" if delta else f"{c.score_after:g} / {c.max_score:g}"
        checks = "; ".join(f"{cid}: {b} -> {a}" for cid, b, a in c.checks) or ("-" if not c.changed else "")
        table.add_row(Text(c.candidate), c.exercise, status, Text(score, style=style), Text(checks))
    console.print(table)
