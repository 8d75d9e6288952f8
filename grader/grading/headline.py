"""The scorecard's ``mistakes`` section: one headline per mistake, however many checks it failed.

An mha that scales by 1/sqrt(D) fails fifteen checks for one reason; the reader wants that reason
once, with the checks it explains and the points it cost, before any table (the way ``rustc`` and
pytest's short summary lead with one line per problem). The section is built from the checks alone:

* a check that cost points and carries ``details["mistake"]`` (a mistake of the bank, named by
  replay in ``grader.grading.diagnosis``, or ``forbidden_api``) joins that mistake's entry, whose
  message is the mistake's diagnosis (``details["diagnosis"]``);
* a check whose message leads with a hand-written hint (``Likely mistake: ...``, said only with
  evidence of its cause, docs/mistakes.md) joins that hint's entry, whose message is the hint: the
  cause is the headline, across every kind of case that showed it. ``name`` is None (no bank
  mistake);
* the other checks that cost points are grouped by what they share: the first line of their message
  and the kind of case that showed it (``details["case"]`` up to its first colon, e.g.
  ``self-attention``; none where the case names no kind). Their entries have ``name`` None.
* a check that says it was not run (``Not run: ...``: the file did not compile, the sandbox crashed)
  points at the status; its entry carries the status message, said once.

Each entry may carry ``difference``: the greatest absolute difference among its checks (the check,
the case, and the comparison's own sentence with the index, got, expected and the tolerance).
Entries are ordered by points lost, most first, then by the first check's place in the card.
"""

from __future__ import annotations

import re
from typing import Iterable

from grader.judge.compare import ROUNDED_TO_FLOAT32
from grader.judge.judges import HINT_LABEL, hint_of

NOT_RUN = ("Not run", "Not graded")
_KIND = re.compile(r"[\w][\w \-]{0,39}")


def first_line(message: str) -> str:
    """The first line of a check's message that is not a "Likely mistake" hint."""
    for line in message.splitlines():
        if line.strip() and not line.startswith(HINT_LABEL):
            return line.strip()
    return ""


def _case_kind(details: dict) -> str:
    """The kind of case a check's details name: its ``case`` up to the first colon ("self-attention:
    query (2, 6, 16)" -> "self-attention"), when that is a short label (words, spaces, hyphens). A
    case that names no kind ("x (2, 6, 16), num_heads=4") has none (""), so its checks group by their
    sentence alone rather than one entry per shape."""
    case = str(details.get("case") or "")
    kind = case.split(":", 1)[0].strip() if ":" in case else ""
    # a label ("self-attention", "chunked"), not a description that has a colon further on ("q (2, 2,
    # 5, 8), k/v (2, 2, 17, 8), causal=True, L_q < L_k: query i sees ...")
    return kind if _KIND.fullmatch(kind) else ""


def _difference(checks: list) -> dict | None:
    """The greatest absolute difference among ``checks`` (those whose details carry one), as
    ``{"check", "case", "text"}``; ``text`` is the comparison's sentence ("Greatest absolute
    difference: 1.49 at index (1, 0, 8) (got ..., expected ...; up to 1e-11 allowed)"). Where no
    check compared arrays, the first check's reason (a probe's ratio, an exception), unless that is
    the entry's message already."""
    best = None
    for c in checks:
        value = c.details.get("max_abs_diff")
        if not isinstance(value, (int, float)) or isinstance(value, bool) or value != value:
            continue
        lines = c.message.splitlines()
        text = next((line.strip() for line in lines if line.startswith("Greatest absolute difference")), "")
        symptom = next((line.strip() for line in lines if line.startswith(ROUNDED_TO_FLOAT32)), "")
        if text and symptom:
            text = f"{text}. {symptom}"  # proven on every value (grader.judge.compare): worth the headline
        if text and (best is None or value > best[0]):
            best = (value, {"check": c.id, "case": c.details.get("case"), "text": text})
    if best is None:  # no array compared (a probe, an exception): the first check's own reason
        for c in checks:
            text = first_line(c.message)
            if text and not c.message.startswith(NOT_RUN):
                return {"check": c.id, "case": c.details.get("case"), "text": text}
    return best[1] if best else None


def mistakes_of(checks: Iterable, status_message: str = "") -> tuple[dict, ...]:
    """The ``mistakes`` section of a scorecard with these checks.

    Args:
        checks: ``CheckResult`` records, in card order.
        status_message: the card's status sentence, which replaces the message of checks that
            were not run (so a compile error's line, caret and reason are said once).

    Returns:
        Entries ``{"name": str | None, "message": str, "checks": [ids], "points_lost": float}``
        (plus ``difference`` where a check compared numbers), most points lost first.
    """
    groups: dict[tuple, dict] = {}
    members: dict[tuple, list] = {}
    order: dict[tuple, int] = {}
    for index, c in enumerate(checks):
        if not c.deducted:
            continue
        name = c.details.get("mistake")
        hint = hint_of(c.message)
        if name:
            key = ("named", str(name))
            message = str(c.details.get("diagnosis") or first_line(c.message))
        elif hint:
            key = ("hint", hint)
            message = hint
        elif c.message.startswith(NOT_RUN):
            key = ("not_run", first_line(c.message))
            message = status_message.strip() or first_line(c.message)
        else:
            key = ("unnamed", first_line(c.message) or c.verdict, _case_kind(c.details))
            message = first_line(c.message) or f"Did not pass ({c.verdict})."
        if key not in groups:
            groups[key] = {"name": str(name) if name else None, "message": message, "checks": [],
                           "points_lost": 0.0}
            members[key] = []
            order[key] = index
        groups[key]["checks"].append(c.id)
        groups[key]["points_lost"] += float(c.max_points) - float(c.points)
        members[key].append(c)
    out = []
    for key in sorted(groups, key=lambda k: (-groups[k]["points_lost"], order[k])):
        entry = groups[key]
        entry["points_lost"] = round(entry["points_lost"], 6)
        difference = _difference(members[key])
        if difference is not None and difference["text"] != entry["message"]:
            entry["difference"] = difference
        out.append(entry)
    return tuple(out)


def candidate_mistakes(checks: Iterable, status_message: str = "") -> tuple[dict, ...]:
    """The ``mistakes`` section a candidate may see: built from the PUBLIC checks only (of the candidate
    view), so every entry names only public checks and its ``points_lost`` counts only theirs; what
    hidden checks did reaches the candidate as their one bit each in the table, never as a headline."""
    return mistakes_of([c for c in checks if c.visibility == "public"], status_message)
