"""The scorecard: one JSON document per graded submission, validated before it is written.

Records are frozen dataclasses with explicit ``to_json``/``from_json``; validation against
``grader/schemas/scorecard.schema.json`` (versioned by ``SCHEMA_VERSION``) happens at the I/O
boundary only. The candidate view and the interviewer view both derive from one scorecard.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import asdict, dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import jsonschema

from grader.grading.headline import candidate_mistakes, first_line, mistakes_of
from grader.judge.verdicts import Status, Verdict

SCHEMA_VERSION = 2
#: Versions this grader still reads (1: written before the ``mistakes`` section; it is rebuilt from the checks).
READABLE_VERSIONS = (1, 2)
SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schemas" / "scorecard.schema.json"


@dataclass(frozen=True)
class CheckResult:
    """One check's verdict in a scorecard.

    Attributes:
        id: the check id from ``exercise.toml``.
        title: one line.
        category: correctness, edge_case, stability, gradient, api or complexity.
        visibility: public or hidden.
        verdict: a ``Verdict`` value.
        points: points earned (``max_points`` when passed or skipped without charge, else 0).
        max_points: points available.
        message: why it did not pass, in a sentence a candidate understands ("" when passed).
        details: numbers: errors, tolerances, shapes, cases run, diagnosis.
    """

    id: str
    title: str
    category: str
    visibility: str
    verdict: str
    points: float
    max_points: float
    message: str = ""
    details: dict = field(default_factory=dict)

    @property
    def summary(self) -> str:
        """The first line of the message that is not a "Likely mistake:" hint (the card's ``mistakes``
        section says that once): what a table of checks shows in one line."""
        return first_line(self.message)

    @property
    def deducted(self) -> bool:
        """Whether the check cost points: not passed, and not skipped without charge (a probe that could
        not judge, a gradient not judged because its forward is wrong)."""
        return self.verdict != Verdict.PASSED and self.points < self.max_points


@dataclass(frozen=True)
class Scorecard:
    """A graded submission (see ``scorecard.schema.json`` for every field).

    Attributes:
        exercise: ``{"id", "version", "title"}``.
        submission: ``{"path", "sha256"}``.
        sandbox: ``{"backend", "image", "isolation", "limits", "selection"}``.
        environment: ``{"python", "numpy", "torch", "platform", "device"}`` of the host.
        started_at: ISO 8601 UTC timestamp.
        duration_s: wall time of the whole grading (seconds).
        status: a ``Status`` value.
        status_message: one sentence about the status ("" when graded cleanly).
        score / max_score: points.
        checks: per-check results, in ``exercise.toml`` order.
        output: the submission's captured stdout/stderr (``text``, ``truncated``) and, in the
            interviewer view, ``candidate_text``: what it printed at import and during public steps
            only, which is all the candidate view shows.
        seed: seed of the hidden cases (interviewer view only; None in the candidate view).
        view: ``interviewer`` (everything) or ``candidate`` (hidden cases redacted).
        artifacts: small arrays for the interviewer's report (``grader.grading.artifacts``: heatmaps of
            public cases' attention weights), size-capped; None when absent and in the candidate view.
        public: what the public part of the grading gave on its own (issue #20), interviewer view
            only: ``{"status", "status_message", "duration_s", "checks", "output", "budget"}``, the
            status, checks of public visibility, printed output and time budget judged from the
            public part's sandbox run alone, before any hidden input existed in a sandbox
            (``grader.grading.split``). The candidate view is built from it. None for cards that
            never ran a hidden part (a compile error, a forbidden name) and cards written before it.
        mistakes: one entry per mistake (``grader.grading.headline.mistakes_of``): ``{"name", "message",
            "checks", "points_lost"}`` and maybe ``difference``; built from the checks when not given
            (grading, and cards of schema version 1).
    """

    exercise: dict
    submission: dict
    sandbox: dict
    environment: dict
    started_at: str
    duration_s: float
    status: str
    status_message: str
    score: float
    max_score: float
    checks: tuple[CheckResult, ...]
    output: dict
    seed: int | None = None
    view: str = "interviewer"
    grader_version: str = ""
    schema_version: int = SCHEMA_VERSION
    artifacts: dict | None = None
    public: dict | None = None
    mistakes: tuple | None = None

    def __post_init__(self) -> None:
        if self.status == Status.INFRASTRUCTURE_ERROR:  # the grader's fault: no mistake of the candidate's
            object.__setattr__(self, "mistakes", ())
        elif self.mistakes is None:
            object.__setattr__(self, "mistakes", mistakes_of(self.checks, self.status_message))
        else:
            object.__setattr__(self, "mistakes", tuple(self.mistakes))

    @property
    def all_passed(self) -> bool:
        """Graded, and every check passed."""
        return self.status == Status.GRADED and all(c.verdict == Verdict.PASSED for c in self.checks)

    def to_json(self) -> dict:
        """The JSON document (plain dicts and lists)."""
        doc = asdict(self)
        doc["checks"] = [asdict(c) for c in self.checks]
        doc["mistakes"] = [dict(m) for m in self.mistakes]
        for optional in ("artifacts", "public"):
            if doc.get(optional) is None:
                doc.pop(optional, None)
        return _json_safe(doc)

    @classmethod
    def from_json(cls, doc: dict) -> "Scorecard":
        """Rebuild from a document (validated first).

        Raises:
            jsonschema.ValidationError: the document does not match the schema.
        """
        validate(doc)
        fields = dict(doc)
        fields["checks"] = tuple(CheckResult(**c) for c in doc["checks"])
        if fields.get("schema_version", 1) < SCHEMA_VERSION:  # read as this version: the section rebuilt
            fields["schema_version"] = SCHEMA_VERSION
        return cls(**fields)

    def candidate_view(self) -> "Scorecard":
        """What a candidate may see (issue #20): the public cases, and one bit per hidden check.

        - **Hidden checks**: passed or not, nothing else. A passed one keeps its points and no
          details; every other one reads ``failed`` with 0 points and the one fixed message
          ``HIDDEN_NOT_PASSED``, whatever its verdict was (failed, error, timeout, memory limit,
          forbidden, skipped): no message, no verdict kind, no numbers, no case, no diagnosis or
          mistake name.
        - **Everything else comes from the public part alone** (``public``, recorded by
          ``grade_submission`` from the public part's sandbox run, before any hidden input was in a
          sandbox): the status and status message, the public checks (their messages, numbers and
          diagnoses were judged without the hidden results), ``duration_s`` and the time budget
          (``sandbox.budget``) as they stood when the public part ended, and the output printed at
          import and during public steps. A hidden part that hangs, crashes, exhausts its memory or
          prints changes none of it.
        - ``score`` is the sum of the points shown. It can differ from the interviewer's score only
          where the hidden part changed what a public check is worth (a forbidden API used on hidden
          inputs only) or a hidden check was skipped without charge: exactly what must not be shown.
        - Dropped: the seed of the hidden cases, the interviewer's artifacts, tamper evidence
          (``interviewer_flag``), the interviewer's full output.

        A card with no ``public`` record ran no hidden part (a compile error, a forbidden name, a
        failed import, a grader fault before any run) or predates the record: its own status and
        public checks are shown, the hidden checks reduced to their bit as above.
        """
        recorded = self.public or {}
        public_checks = {c["id"]: CheckResult(**c) for c in recorded.get("checks", [])}
        checks = []
        for c in self.checks:
            if c.visibility == "hidden":
                checks.append(replace(c, message="", details={}) if c.verdict == Verdict.PASSED else
                              replace(c, verdict=str(Verdict.FAILED), points=0.0, message=HIDDEN_NOT_PASSED,
                                      details={}))
                continue
            c = public_checks.get(c.id, c)
            if "interviewer_flag" in c.details:  # tamper evidence (grader.judge.forgery): interviewer only
                c = replace(c, details={k: v for k, v in c.details.items() if k != "interviewer_flag"},
                            message="" if c.message.startswith("Interviewer note: ") else c.message)
            checks.append(c)
        if self.public is not None:
            output = dict(recorded["output"])
            sandbox = {**self.sandbox, "budget": recorded.get("budget")}
            if sandbox["budget"] is None:
                sandbox.pop("budget")
            status, message = recorded["status"], recorded["status_message"]
            duration = float(recorded["duration_s"])
        else:
            # Only what was printed at import and during public steps; a card without that split shows none.
            output = {"text": self.output.get("candidate_text", ""), "truncated": bool(self.output.get("truncated"))}
            sandbox = {k: v for k, v in self.sandbox.items() if k != "budget"}
            status, message, duration = self.status, self.status_message, self.duration_s
        return replace(self, checks=tuple(checks), seed=None, view="candidate", artifacts=None, output=output,
                       status=status, status_message=message, duration_s=duration, sandbox=sandbox,
                       score=float(sum(c.points for c in checks)), public=None,
                       mistakes=candidate_mistakes(tuple(checks), message))


#: The one message of every hidden check that did not pass, in the candidate view.
HIDDEN_NOT_PASSED = "Did not pass on a hidden case (only whether each hidden check passed is shown)."


def _json_safe(value: Any) -> Any:
    """Replace non-finite floats (not valid JSON) with strings, recursively."""
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    return value


@lru_cache(maxsize=1)
def schema() -> dict:
    """The scorecard JSON Schema."""
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def validate(doc: dict) -> None:
    """Validate a scorecard document against the schema.

    Raises:
        jsonschema.ValidationError: it does not match.
    """
    _validator().validate(doc)


@lru_cache(maxsize=1)
def _validator():
    """The schema's validator, built once per process: ``jsonschema.validate`` re-checks the schema
    against its meta-schema and rebuilds the validator on every call (0.1-0.2 s of each service
    grading on a loaded machine, twice per submission)."""
    cls = jsonschema.validators.validator_for(schema())
    cls.check_schema(schema())
    return cls(schema(), format_checker=jsonschema.FormatChecker())


def write_scorecard(card: Scorecard, path: Path) -> None:
    """Validate and write ``card`` as JSON to ``path`` atomically (a temp file, then rename).

    Raises:
        jsonschema.ValidationError: the scorecard is invalid (nothing is written).
        OSError: the file cannot be written.
    """
    doc = card.to_json()
    validate(doc)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".scorecard-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, indent=2)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_scorecard(path: Path) -> Scorecard:
    """Read and validate a scorecard file.

    Raises:
        OSError, json.JSONDecodeError, jsonschema.ValidationError.
    """
    return Scorecard.from_json(json.loads(Path(path).read_text(encoding="utf-8")))
