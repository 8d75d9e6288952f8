"""Host side of the runtime op audit: read what the runner's ``TorchDispatchMode`` recorded.

The runner (``grader.run.runner``) records, per step, the aten ops a torch submission ran
(``ops_seen``) and those matching the exercise's ``forbidden_ops`` patterns (``forbidden_ops``).
Here the host turns that into a ``forbidden`` finding, naming the op and the step, and lists the
ops seen per check for the scorecard's details. The audit runs in the submission's process, so it
is evidence, not proof (docs/security.md, "Threat model in brief"); the static scan backs it up.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from grader.run.channel import RunResults
from grader.run.plan import Plan
from grader.grading.scorecard import CheckResult


@dataclass(frozen=True)
class ForbiddenOp:
    """One forbidden aten op seen while a step ran.

    Attributes:
        op: the op's name (``aten._scaled_dot_product_flash_attention_for_cpu``).
        step: the id of the step during which it ran (its call or backward pass).
        case: how that step's case reads (the step's ``describe``).
    """

    op: str
    step: str
    case: str = ""

    def sentence(self) -> str:
        """``ran aten.x (in step values.3: query (2, 5, 8) ...)``."""
        where = f"step {self.step}" + (f": {self.case}" if self.case else "")
        return f"ran {self.op} (in {where})"


def forbidden_ops(plan: Plan, results: RunResults) -> list[ForbiddenOp]:
    """Every (op, first step) pair the audit flagged, in plan order."""
    found: dict[str, ForbiddenOp] = {}
    for step in plan.steps:
        res = results.steps.get(step.id)
        for op in (res.report.get("forbidden_ops") or []) if res else []:
            found.setdefault(str(op), ForbiddenOp(str(op), step.id, step.describe))
    return list(found.values())


def message(findings: list[ForbiddenOp]) -> str:
    """One sentence for the candidate naming each forbidden op and where it ran."""
    return ("The submission " + "; ".join(f.sentence() for f in findings)
            + ", which this exercise forbids (a fused attention kernel; write the attention yourself).")


def with_ops_seen(checks: tuple[CheckResult, ...], plan: Plan, results: RunResults) -> tuple[CheckResult, ...]:
    """The checks with ``details["ops_seen"]``: the aten ops the submission ran in each check's steps."""
    by_check: dict[str, set[str]] = {}
    for step in plan.steps:
        res = results.steps.get(step.id)
        if res and res.report.get("ops_seen") is not None:
            by_check.setdefault(step.check, set()).update(map(str, res.report["ops_seen"]))
    return tuple(replace(c, details={**c.details, "ops_seen": sorted(by_check[c.id])}) if c.id in by_check else c
                 for c in checks)
