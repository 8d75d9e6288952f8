"""Split a plan into the part a candidate may see and the hidden part (issue #20).

Interview mode promises that nothing the candidate sees is computed while a hidden input exists in
the sandbox. ``grade_submission`` therefore runs a plan in two sandboxes, one after the other: the
*public* part (every step of a public check: value cases and probes, all built from
``PUBLIC_SEED``) with the public arrays only, and then, in a fresh sandbox, the *hidden* part (every
step of a hidden check) with the arrays those steps use. The submission is imported in each; what it
printed, raised or timed while importing and during public steps is all that the candidate view is
built from (``Scorecard.candidate_view``).

A hidden step may act on an object that public steps built (a ``construct`` then ``method``): the
hidden part then first *replays* those public steps (as ``grader.grading.restart.continuation``
replays steps after a restart); their results in the hidden run are ignored (the public run's
count). A public step can never depend on a hidden one: the plan is refused (``GraderBug``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from grader.judge.judges import GraderBug
from grader.run.plan import Plan
from grader.run.runner import step_args
from grader.grading.restart import continuation


@dataclass
class PlanPart:
    """One part of a split plan, as one sandbox job receives it.

    Attributes:
        wire: the ``plan.json`` document of the part (the plan's settings, the part's steps).
        arrays: the input arrays its steps use (nothing else of the plan).
        steps: ids of the steps that belong to the part (replays of public steps excluded).
        replayed: ids of public steps replayed first to rebuild kept objects (hidden part only).
    """

    wire: dict
    arrays: dict[str, np.ndarray]
    steps: list[str] = field(default_factory=list)
    replayed: list[str] = field(default_factory=list)


def arrays_used(wire_steps: list[dict]) -> set[str]:
    """Names of the input arrays that ``wire_steps`` read: array and tensor arguments (members of
    ``dict`` arguments included) and a ``backward``'s ``grad_output``."""
    names: set[str] = set()
    for step in wire_steps:
        for arg in step_args(step):
            for key in ("array", "tensor"):
                if key in arg:
                    names.add(arg[key])
        if step.get("backward"):
            names.add(step["backward"]["grad_output"])
    return names


def _objects(step: dict) -> tuple[set[str], str | None]:
    used = {step["target"]} if step.get("op") in ("method", "getattr") else set()
    used |= {a["object"] for a in step_args(step) if "object" in a}
    made = (step.get("save_as") or step["id"]) if step.get("op") == "construct" else None
    return used, made


def split_plan(plan: Plan, hidden_checks: set[str]) -> tuple[PlanPart, PlanPart]:
    """The public and the hidden part of ``plan``.

    Args:
        plan: the full plan (public cases, hidden cases, probes).
        hidden_checks: ids of the exercise's checks of ``visibility = "hidden"``; every other step
            (probes and their warm-ups included: their inputs are public-seed) is public.

    Returns:
        ``(public, hidden)``. The hidden part is empty (no steps) when the exercise has no hidden check.

    Raises:
        GraderBug: a public step uses a kept object made by a hidden step, or reads an input array
            that only hidden steps read (the public part would then not be public).
    """
    wire = plan.wire()
    steps = wire["steps"]
    public_ids = [s.id for s in plan.steps if s.check not in hidden_checks]
    hidden_ids = [s.id for s in plan.steps if s.check in hidden_checks]
    public_set = set(public_ids)
    made_by_hidden: set[str] = set()
    for step in steps:
        used, made = _objects(step)
        if step["id"] in public_set:
            if used & made_by_hidden:
                raise GraderBug(f"public step {step['id']!r} acts on an object made by a hidden step "
                                f"({sorted(used & made_by_hidden)}): the plan cannot be split")
        elif made:
            made_by_hidden.add(made)
    public_steps = [s for s in steps if s["id"] in public_set]
    public = PlanPart(wire={**wire, "steps": public_steps}, steps=public_ids,
                      arrays={k: plan.arrays[k] for k in sorted(arrays_used(public_steps))})
    if not hidden_ids:
        return public, PlanPart(wire={**wire, "steps": []}, arrays={})
    # The hidden part: what a continuation after the last public step runs (replays of the public
    # steps that build an object a hidden step needs, then the hidden steps), in plan order. A marker
    # stands for "the public part ended" (it acts on no object, so no object is tainted).
    marker = {"id": "\x00public-done", "op": "call", "target": "", "args": [], "kwargs": {}}
    hidden_only = [s for s in steps if s["id"] not in public_set]
    rest, _unrun = continuation([*public_steps, marker, *hidden_only], marker["id"])
    hidden_steps = [{k: v for k, v in s.items() if k != "measure"} if s["id"] in public_set else s
                    for s in rest]
    hidden = PlanPart(wire={**wire, "steps": hidden_steps}, steps=hidden_ids,
                      replayed=[s["id"] for s in hidden_steps if s["id"] in public_set],
                      arrays={k: plan.arrays[k] for k in sorted(arrays_used(hidden_steps))})
    return public, hidden

