"""``grade selfcheck``: prove that an exercise grades what it should.

For each exercise and track: the reference must score full marks; the stub must score 0 with status
``graded``; every ``correct_*.py`` of the track's samples (``submissions/samples/<id>/`` for the
default track, ``submissions/samples/<id>/<track>/`` for the other) must score full marks; every
``bug_*.py`` must fail the check(s) its docstring names, on a line of the form::

    Must fail: values_nd

(several ids separated by commas: at least one of them must fail). A named check the exercise
does not declare yet is reported as "expected <id> failure, not yet checked" rather than passing.

Every mutant of the bank must fail the checks it names, and no wrong file may be given two different
sets of bank names at two seeds (a name must not depend on the draw of the hidden cases).

**Confusers** (``exercises/<id>/confusers/``, ``confusers_<track>/`` in the other track) are wrong
solutions whose symptom matches a hint or a bank message while their cause is another (a cache
whose tokens are appended twice looks like a preallocated buffer from its length alone). Each one's
docstring says which names it must not get and, optionally, which it may get::

    Must not name: cache_exposes_preallocated_buffer, "preallocated buffer"
    May name: cache_appended_twice, "the output contains NaN"

(a bare word is a mistake of the bank, a quoted phrase a part of a hand-written "Likely mistake:"
sentence). A confuser is graded as intended when it loses points and every "Likely mistake:" line of
its scorecard, at every seed, is one its ``May name:`` line allows: any other name is a wrong
diagnosis, and fails the self-check. "Precision on confusers" (confusers with no wrong name, of all
confusers) is reported apart from the precision on mutants, whose cause is their name's by
construction.
"""

from __future__ import annotations

import ast
import re
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from rich.console import Console
from rich.table import Table
from rich.text import Text

from grader.grading.exercise import Exercise, project_root
from grader.grading.grade import grade_submission
from grader.grading.scorecard import Scorecard
from grader.judge.judges import hints_in
from grader.judge.verdicts import Status
from grader.pyparse import parse

MUST_FAIL = re.compile(r"^\s*Must fail:\s*(.+?)\s*$", re.MULTILINE)


def expected_failures(path: Path) -> list[str]:
    """Check ids named by a ``Must fail:`` line in the module docstring of ``path``.

    Raises:
        ValueError: the file has no docstring or no such line.
    """
    doc = ast.get_docstring(parse(path.read_text(encoding="utf-8"))) or ""
    match = MUST_FAIL.search(doc)
    if not match:
        raise ValueError(f"{path} has no 'Must fail: <check id>' line in its docstring")
    return [c.strip() for c in match.group(1).split(",") if c.strip()]


def samples_dir(exercise: Exercise) -> Path:
    """The samples of the exercise's track: ``submissions/samples/<id>/`` or ``.../<id>/<track>/``."""
    return exercise.samples_path


MISTAKE_LINE = re.compile(r"^\s*Mistake:\s*(\S+)\s*$", re.MULTILINE)
MUST_NOT_NAME = re.compile(r"^\s*Must not name:\s*(.+?)\s*$", re.MULTILINE)
MAY_NAME = re.compile(r"^\s*May name:\s*(.+?)\s*$", re.MULTILINE)
_ITEM = re.compile(r'"([^"]+)"|([A-Za-z_][A-Za-z0-9_]*)')
#: How a hand-written hint is listed among a card's names (a bank mistake is listed by its name).
HINT_PREFIX = "hint: "


def _items(line: str) -> list[str]:
    """The comma-separated items of a ``Must not name:`` / ``May name:`` line: bank names as they are,
    quoted phrases as ``hint: <phrase>``."""
    return [name or HINT_PREFIX + phrase for phrase, name in _ITEM.findall(line)]


def confuser_rules(path: Path) -> tuple[list[str], list[str]]:
    """``(must_not, may)``: the names a confuser must not get and those it may (``May name:``, optional),
    read from its module docstring; bank mistakes by name, hand-written hints as ``hint: <phrase>``.

    Raises:
        ValueError: the file has no docstring or no ``Must not name:`` line.
    """
    doc = ast.get_docstring(parse(path.read_text(encoding="utf-8"))) or ""
    must_not = MUST_NOT_NAME.search(doc)
    if not must_not or not _items(must_not.group(1)):
        raise ValueError(f"{path} has no 'Must not name: <mistake or \"phrase\">' line in its docstring")
    may = MAY_NAME.search(doc)
    return _items(must_not.group(1)), _items(may.group(1)) if may else []


def card_names(card: Scorecard) -> list[str]:
    """Every cause a scorecard names, sorted: each bank mistake by its name (``details["mistake"]``),
    each hand-written "Likely mistake: ..." sentence as ``hint: <sentence>``."""
    names = set()
    for c in card.checks:
        if c.details.get("mistake"):
            names.add(c.details["mistake"])
            continue
        names.update(HINT_PREFIX + hint for hint in hints_in(c.message or ""))
    return sorted(names)


def allowed_name(name: str, may: list[str]) -> bool:
    """Whether a confuser's ``May name:`` items allow ``name`` (a bank mistake's name, or a hint
    ``hint: <sentence>`` that contains an allowed phrase)."""
    if not name.startswith(HINT_PREFIX):
        return name in may
    return any(m.startswith(HINT_PREFIX) and m[len(HINT_PREFIX):] in name for m in may)


def declared_mistake(path: Path) -> str | None:
    """The bank mistake a bug sample declares it makes (a ``Mistake: <name>`` docstring line), or None."""
    doc = ast.get_docstring(parse(path.read_text(encoding="utf-8"))) or ""
    match = MISTAKE_LINE.search(doc)
    return match.group(1) if match else None


@dataclass
class SelfcheckRow:
    """One graded file of a self-check and whether it came out as intended.

    Attributes:
        kind: reference, stub, correct, bug (a sample file) or mistake (a mutant of the bank).
        failed_checks: checks that cost the file points (``CheckResult.deducted``), in plan order.
        scores: score per seed graded (``--seeds N``); ``ok`` is False when they differ.
        mistake: the mistake the file makes (a mutant's own name, a bug sample's ``Mistake:`` line).
        diagnosed: mistake names the scorecard named (``details["mistake"]`` of its checks).
        timed: complexity checks that were judged by timing instead of counting (probe
            ``details["method"] == "time"``) at any seed graded; the goal is none for correct files.
        wrong_names: a confuser's names (bank mistakes, ``hint: <sentence>``) that its ``May name:``
            line does not allow, at any seed; must be none.
        targets: a confuser's ``Must not name:`` items: the bank messages and hints it is a confuser of.
    """

    exercise: str
    file: str
    kind: str  # reference, stub, correct, bug, mistake, confuser
    expectation: str
    status: str
    score: float
    max_score: float
    failed_checks: list[str] = field(default_factory=list)
    ok: bool = False
    note: str = ""
    infrastructure: bool = False
    track: str = ""
    scores: dict = field(default_factory=dict)
    mistake: str | None = None
    diagnosed: list[str] = field(default_factory=list)
    timed: list[str] = field(default_factory=list)
    wrong_names: list[str] = field(default_factory=list)
    targets: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        """As a JSON-able dict."""
        return asdict(self)


def _relative(path: Path) -> str:
    return str(path.relative_to(project_root()) if path.is_relative_to(project_root()) else path)


def _judge_row(exercise: Exercise, path: Path, kind: str, card: Scorecard,
               wanted: list[str] | None = None) -> SelfcheckRow:
    failed = [c.id for c in card.checks if c.deducted]  # a skip without charge is no deduction
    row = SelfcheckRow(exercise=exercise.id, file=_relative(path), kind=kind, expectation="", status=card.status,
                       score=card.score, max_score=card.max_score, failed_checks=failed, track=exercise.track)
    row.infrastructure = card.status == Status.INFRASTRUCTURE_ERROR
    row.diagnosed = sorted({c.details.get("mistake") for c in card.checks if c.details.get("mistake")})
    if kind in ("reference", "correct"):
        row.expectation = "full marks"
        row.ok = card.all_passed and not row.diagnosed
        if not card.all_passed:
            first = next((c.message.splitlines()[0] for c in card.checks if c.verdict != "passed" and c.message), "")
            row.note = (f"failed {', '.join(failed)}" + (f" ({first})" if first else "")) if failed \
                else card.status_message
        elif row.diagnosed:
            row.note = f"a correct file was diagnosed as {', '.join(row.diagnosed)}"
    elif kind == "stub":
        row.expectation = "0 points, graded"
        row.ok = card.status == Status.GRADED and card.score == 0
    elif kind == "confuser":
        try:
            must_not, may = confuser_rules(path)
        except (ValueError, SyntaxError) as exc:
            row.expectation, row.ok, row.note = "a 'Must not name:' line", False, str(exc)
            return row
        row.expectation = "below full marks, named " + (" or ".join(may) if may else "nothing") + " at most"
        row.targets = must_not
        named = card_names(card)
        row.wrong_names = [n for n in named if not allowed_name(n, may)]
        forbidden = [n for n in row.wrong_names
                     if n in must_not or any(m.startswith(HINT_PREFIX) and m[len(HINT_PREFIX):] in n for m in must_not)]
        row.ok = card.status == Status.GRADED and card.score < card.max_score and not row.wrong_names
        if row.wrong_names:
            row.note = ("wrong diagnosis: " + "; ".join(row.wrong_names)
                        + (" (its docstring says it must not get this)" if forbidden else ""))
        elif not row.ok:
            row.note = card.status_message or "full marks: a confuser must be a wrong solution"
    elif kind == "mistake":
        declared = {c.id for c in exercise.checks}
        row.expectation = "fails " + " and ".join(wanted) + ", below full marks"
        missing = [w for w in wanted if w not in failed]
        unknown = [w for w in wanted if w not in declared]
        row.ok = (card.status == Status.GRADED and not missing and not unknown and card.score < card.max_score)
        if not row.ok:
            row.note = (f"names undeclared check(s) {', '.join(unknown)}" if unknown else
                        f"passed {', '.join(missing)}" if missing else card.status_message or "full marks")
    else:
        try:
            wanted = expected_failures(path)
        except (ValueError, SyntaxError) as exc:  # a malformed sample is a failed row, not a crash
            row.expectation, row.ok, row.note = "a 'Must fail:' line", False, str(exc)
            return row
        declared = {c.id for c in exercise.checks}
        checkable = [w for w in wanted if w in declared]
        row.expectation = "fails " + " or ".join(wanted)
        if not checkable:
            row.ok = True
            row.note = f"expected {' or '.join(wanted)} failure, not yet checked"
        else:
            row.ok = card.status == Status.GRADED and any(w in failed for w in checkable)
            if not row.ok:
                row.note = (f"passed {', '.join(checkable)}" if card.status == Status.GRADED
                            else card.status_message)
    return row


def selfcheck_files(exercise: Exercise) -> list[tuple[Path, str]]:
    """Every file a self-check grades, with its kind: reference, stub, samples, then the bank's mutants."""
    files = [(exercise.reference_path, "reference"), (exercise.stub_path, "stub")]
    folder = samples_dir(exercise)
    files += [(p, "correct") for p in sorted(folder.glob("correct_*.py"))]
    files += [(p, "bug") for p in sorted(folder.glob("bug_*.py"))]
    files += [(m.path, "mistake") for m in exercise.mistakes]
    files += [(p, "confuser") for p in sorted(exercise.confusers_dir.glob("*.py")) if not p.name.startswith("_")]
    return files


#: The kinds of file a sandboxed self-check sends to its sandbox (mutants and confusers run in process).
SANDBOXED_KINDS = frozenset({"reference", "stub", "correct", "bug"})


def run_selfcheck(exercises: list[Exercise], *, sandbox: str | None = None, seed: int = 1234, seeds: int = 1,
                  progress: Callable[[str], None] | None = None,
                  kinds: frozenset[str] | None = None) -> list[SelfcheckRow]:
    """Grade the reference, the stub, every sample and every mutant of each exercise; see the module docstring.

    Args:
        exercises: the exercises to prove.
        sandbox: None (the warm path: every file of the repository runs in this process through
            ``grader.grading.trusted``), or ``auto``/``process``/``docker`` to run the reference, the
            stub and the samples in that sandbox. Mutants of the bank always run in this process
            (trusted host code, never sent to a sandbox), and so do confusers: what they prove is
            the host's naming, which no sandbox changes (the samples prove the sandbox's transport).
        seed: the first hidden-case seed.
        seeds: how many seeds (``seed``, ``seed + 1``, ...) every file is graded at; a file whose
            score differs between them is not as intended. A file run in this process measures its
            probes at the first seed only (``grader.grading.trusted.ProbeReplay``: a probe's inputs
            come from ``PROBE_SEED`` at every seed); its cases run at every seed.
        progress: called with a short line per file.
        kinds: grade only the files of these kinds (``reference``, ``stub``, ``correct``, ``bug``,
            ``mistake``, ``confuser``); None grades all. ``SANDBOXED_KINDS`` are those a sandbox runs:
            a sandboxed self-check of them alone proves the transport without grading the mutants and
            confusers again in this process (the warm path's self-check does that at the same seed).
    """
    from grader.grading.grade import _MEASURE_LOCK, build_plan, probe_block  # noqa: PLC0415 - one measured run at a time
    from grader.grading.trusted import ProbeReplay, TrustedInProcess  # noqa: PLC0415

    say = progress or (lambda _m: None)
    rows = []
    for ex in exercises:
        files = [(p, k) for p, k in selfcheck_files(ex) if kinds is None or k in kinds]
        folder = samples_dir(ex)
        for kind, what in (("correct", "correct solutions in other styles"), ("bug", "named mistakes")):
            if kinds is not None and kind not in kinds:
                continue
            if not any(k == kind or (kind == "bug" and k == "mistake") for _, k in files):
                rows.append(SelfcheckRow(exercise=ex.id, file=str(folder / f"{kind}_*.py"), kind="missing",
                                         expectation=f"some {kind}_*.py", status="missing", score=0.0,
                                         max_score=ex.max_score, ok=False, track=ex.track,
                                         note=f"no {kind}_*.py in {folder}: add {what} (docs/authoring.md)"))
        by_path = {m.path: m for m in ex.mistakes}
        probe_ids = frozenset(st.id for st in probe_block(ex, build_plan(ex, seed))) if seeds > 1 else None
        for path, kind in files:
            say(f"{ex.id} ({ex.track}): {path.name}")
            mistake = by_path.get(path)
            cards = []
            # the probes are drawn from PROBE_SEED at every seed: measured at the first, given again at
            # the others (trusted files only; the cases run at every seed)
            replay = ProbeReplay(probe_ids) if probe_ids else None
            for s in range(seed, seed + max(1, seeds)):
                label = _relative(path)
                if mistake is not None:
                    with tempfile.TemporaryDirectory() as tmp:
                        mutant = Path(tmp) / path.name
                        mutant.write_text(mistake.source, encoding="utf-8")
                        card = grade_submission(ex, mutant, seed=s, trusted_runner=TrustedInProcess(
                            label, _MEASURE_LOCK, replay))
                elif sandbox is None or kind == "confuser":
                    card = grade_submission(ex, path, seed=s, trusted_runner=TrustedInProcess(
                        label, _MEASURE_LOCK, replay))
                else:
                    card = grade_submission(ex, path, sandbox=sandbox, seed=s)
                cards.append((s, card))
            row = _judge_row(ex, path, kind, cards[0][1], list(mistake.must_fail) if mistake else None)
            row.mistake = mistake.name if mistake else declared_mistake(path) if kind == "bug" else None
            row.scores = {str(s): c.score for s, c in cards}
            row.timed = sorted({c.id for _, card in cards for c in card.checks
                                if c.category == "complexity" and (c.details or {}).get("method") == "time"})
            for s, card in cards[1:]:
                other = _judge_row(ex, path, kind, card, list(mistake.must_fail) if mistake else None)
                row.wrong_names = sorted(set(row.wrong_names) | set(other.wrong_names))
                if not other.ok and row.ok:
                    row.ok, row.note = False, f"at seed {s}: {other.note}"
            # bank names only: a hand-written hint may join them on a seed whose cases show its evidence
            named = {s: sorted({c.details.get("mistake") for c in card.checks if c.details.get("mistake")})
                     for s, card in cards}
            if kind in ("bug", "mistake", "confuser") and len({tuple(n) for n in named.values() if n}) > 1:
                row.ok = False  # a name must not depend on the hidden cases' draw
                row.note = ("named differently at different seeds: "
                            + "; ".join(f"{', '.join(n) or 'nothing'} at seed {k}" for k, n in named.items())
                            + (f"; {row.note}" if row.note else ""))
            if len(set(row.scores.values())) > 1 and kind == "confuser":
                # a confuser proves names, not the hidden cases' reach: its score may vary, said in the note
                row.note = ("score depends on the seed (not a naming fault): "
                            + ", ".join(f"{v:g} at seed {k}" for k, v in row.scores.items())
                            + (f"; {row.note}" if row.note else ""))
            elif len(set(row.scores.values())) > 1:
                row.ok = False
                row.note = ("score depends on the seed: " + ", ".join(f"{v:g} at seed {k}" for k, v in row.scores.items())
                            + (f"; {row.note}" if row.note else ""))
            rows.append(row)
    return rows


@dataclass(frozen=True)
class DiagnosisStats:
    """How well the mistake bank diagnoses the self-check's wrong files.

    Attributes:
        wrong_files: bug samples and mutants graded.
        named: of them, those whose scorecard named a mistake.
        precise: of the named ones with a known mistake, those named only by their own mistake.
        judged: named ones whose own mistake is known (mutants, bug samples with a ``Mistake:`` line).
        correct_diagnosed: reference or correct samples that got a diagnosis (must be 0).
        confusers: confusers graded (``exercises/<id>/confusers``).
        confusers_clean: of them, those that got no wrong name at any seed.
        bank_messages: the bank's mistakes graded, one per exercise, track and name.
        bank_messages_confused: of them, those some confuser of the same exercise and track names
            in its ``Must not name:`` line (issue 24 asks for every one).
    """

    wrong_files: int
    named: int
    precise: int
    judged: int
    correct_diagnosed: int
    confusers: int = 0
    confusers_clean: int = 0
    bank_messages: int = 0
    bank_messages_confused: int = 0

    @property
    def confuser_precision(self) -> float:
        """confusers_clean / confusers (1.0 when there are none)."""
        return self.confusers_clean / self.confusers if self.confusers else 1.0

    @property
    def precision(self) -> float:
        """precise / judged (1.0 when nothing was judged)."""
        return self.precise / self.judged if self.judged else 1.0

    @property
    def recall(self) -> float:
        """named / wrong_files (1.0 when there are none)."""
        return self.named / self.wrong_files if self.wrong_files else 1.0


def diagnosis_stats(rows: list[SelfcheckRow]) -> DiagnosisStats:
    """Precision and recall of the named diagnoses over the rows of a self-check."""
    wrong = [r for r in rows if r.kind in ("bug", "mistake")]
    named = [r for r in wrong if r.diagnosed]
    judged = [r for r in named if r.mistake]
    precise = [r for r in judged if r.diagnosed == [r.mistake]]
    correct = [r for r in rows if r.kind in ("reference", "correct") and r.diagnosed]
    confusers = [r for r in rows if r.kind == "confuser"]
    messages = {(r.exercise, r.track, r.mistake) for r in rows if r.kind == "mistake" and r.mistake}
    targeted = {(r.exercise, r.track, t) for r in confusers for t in r.targets}
    return DiagnosisStats(len(wrong), len(named), len(precise), len(judged), len(correct), len(confusers),
                          len([r for r in confusers if not r.wrong_names]), len(messages),
                          len(messages & targeted))


def _by_track(rows: list[SelfcheckRow]) -> dict[tuple[str, str], list[SelfcheckRow]]:
    groups: dict[tuple[str, str], list[SelfcheckRow]] = {}
    for r in rows:
        groups.setdefault((r.exercise, r.track), []).append(r)
    return groups


def render_matrix(rows: list[SelfcheckRow], console: Console) -> None:
    """Print the self-check matrix and a one-line total."""
    table = Table()
    for col in ("exercise", "track", "file", "expected", "got", "ok", "note"):
        table.add_column(col)
    for r in rows:
        got = f"{r.status} {r.score:g}/{r.max_score:g}"
        if r.kind in ("bug", "mistake", "confuser") and r.failed_checks:
            got += (f" failed {len(r.failed_checks)}: " + ",".join(r.failed_checks[:4])
                    + ("..." if len(r.failed_checks) > 4 else ""))
        if r.diagnosed:
            got += " diagnosed " + ",".join(r.diagnosed)
        if r.wrong_names:
            got += f" named {len(r.wrong_names)} wrong cause(s)"
        table.add_row(r.exercise, r.track, Path(r.file).name, r.expectation, got,
                      Text("yes", style="green") if r.ok else Text("NO", style="bold red"), r.note)
    console.print(table)
    bad = [r for r in rows if not r.ok]
    pending = [r for r in rows if "not yet checked" in r.note]
    stats = diagnosis_stats(rows)
    console.print(f"diagnosis: precision on mutants and samples {100 * stats.precision:.0f}% ({stats.precise} of {stats.judged} named "
                  f"diagnoses are the file's own mistake), recall {100 * stats.recall:.0f}% ({stats.named} of "
                  f"{stats.wrong_files} wrong files named); correct files diagnosed: {stats.correct_diagnosed}")
    console.print(f"precision on confusers: {100 * stats.confuser_precision:.0f}% ({stats.confusers_clean} of "
                  f"{stats.confusers} confusers got no wrong name: a wrong solution whose symptom matches a hint "
                  "or a bank message while its cause is another)")
    console.print(f"bank messages with a confuser: {stats.bank_messages_confused} of {stats.bank_messages} (a confuser "
                  "names the message in its 'Must not name:' line; the goal is every one)")
    for (exercise, track), group in _by_track(rows).items():
        correct = [r for r in group if r.kind in ("reference", "correct")]
        timed = [r for r in group if r.timed]
        console.print(f"{exercise} ({track}): complexity judged by timing in {len(timed)} of {len(group)} files"
                      f" ({len([r for r in correct if r.timed])} of {len(correct)} correct ones; goal: none)")
    console.print(f"{len(rows) - len(bad)} of {len(rows)} files graded as intended"
                  + (f", {len(pending)} expected failures not yet checked" if pending else "")
                  + (f"; {len(bad)} NOT as intended" if bad else ""))
