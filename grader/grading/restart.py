"""Restart the runner after a step hangs, so one hanging step does not cost every later check (#12).

Inside the sandbox each step has its own limit (``step_timeout_s`` of CPU time, enforced with
``SIGPROF``, and a ``SIGALRM`` wall-clock backstop several times longer), but the run as a whole
has one wall clock and one CPU budget. A step stuck in C code (where the alarm cannot interrupt it),
or several steps that each spend their whole limit, use up that budget, and
the backend then ends the run with every later step unrun. ``run_with_restarts`` then starts a fresh
sandbox with a *continuation* of the plan: the step that was running when the budget ran out is
charged a ``StepTimeout`` (what the runner would have reported), and the steps after it run again
with a full budget. A run is restarted at most ``MAX_RUNS - 1`` times, and not after two runs in a row
that finished no new step (a submission that hangs on every step costs at most three runs).

Steps that act on a kept object (``method``/``getattr`` on an object made by ``construct``, or an
``{"object": NAME}`` argument) need that object's state: the continuation first *replays* the
object's earlier steps (their results are already known and are ignored), except when the hung step
itself acted on the object: its state is then unknown, and the steps that need it are left unrun
(judged as today: not run because an earlier step failed).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Callable

from grader.run.channel import RunResults, StepResult
from grader.sandbox.base import Limits, Sandbox, SandboxJob, SandboxRun

#: Runs of one submission at most: the first, then restarts after hung steps.
MAX_RUNS = 4
#: The whole grading of one submission (every sandbox run: public part, hidden part, restarts) is
#: charged at most this many times the run's wall limit (issue #20).
BUDGET_FACTOR = 2.0
#: After a step has hung, a later step's CPU limit is this many times the reference's own time for
#: that step, never under ``AFTER_HANG_FLOOR_S`` and never over the step's own limit.
AFTER_HANG_FACTOR = 50.0
#: The floor of that limit (CPU seconds): generous for any correct call of these exercises.
AFTER_HANG_FLOOR_S = 1.0
#: A run is not started with less budget than this left (seconds).
MIN_RUN_S = 1.0
#: While the public part runs, this fraction of the run limit is kept for the hidden part, so that a
#: submission stalling on public steps (every restart spending its whole limit) still has its hidden
#: cases graded; the public part's first run always gets the whole run limit.
HIDDEN_RESERVE_FRACTION = 0.5


@dataclass
class Budget:
    """The time one grading may spend in sandboxes, shared by all of its runs (issue #20).

    Each run is given the run limit or what is left of the budget, whichever is smaller, and is
    charged its wall time up to the limit it was given: the load allowance of
    ``grader.sandbox.deadline`` (a run starved of CPU on a loaded host gets more wall clock) is not
    charged, so the same file gets the same verdicts under any load, and a run that waits is charged
    its wall clock. The sum charged therefore never passes ``total_s``.

    Attributes:
        total_s: seconds the grading may be charged (``BUDGET_FACTOR`` times the run limit).
        spent_s: seconds charged so far.
        wall_s: wall-clock seconds the runs took (including load allowances).
        runs: sandbox runs started.
        first_hang: ``{"step", "why"}`` of the first step that ran out of time, or None.
        exhausted: a run was cut short, or not started, because the budget was spent.
        reserved_s: seconds no run may use for now (kept for a later part; not in ``to_json``).
    """

    total_s: float
    spent_s: float = 0.0
    wall_s: float = 0.0
    runs: int = 0
    first_hang: dict | None = None
    exhausted: bool = False
    reserved_s: float = 0.0

    @classmethod
    def for_limits(cls, limits: Limits) -> "Budget":
        """A fresh budget of ``BUDGET_FACTOR`` times ``limits.wall_seconds``."""
        return cls(total_s=BUDGET_FACTOR * float(limits.wall_seconds))

    def left(self) -> float:
        """Seconds left for the next run: the budget less what was charged and what is reserved."""
        return max(0.0, self.total_s - self.spent_s - self.reserved_s)

    def limits_for_run(self, limits: Limits) -> Limits | None:
        """``limits`` with the wall limit (and CPU budget) cut to what is left; None when less than
        ``MIN_RUN_S`` is left (the run is not started)."""
        left = self.left()
        if left < MIN_RUN_S:
            self.exhausted = True  # of this part's share (the reserve, if any, is the next part's)
            return None
        if left >= limits.wall_seconds:
            return limits
        return replace(limits, wall_seconds=left, cpu_seconds=max(1, min(int(limits.cpu_seconds), math.ceil(left))))

    def charge(self, run: SandboxRun, given: Limits) -> None:
        """Count ``run``, which ran under ``given``."""
        self.runs += 1
        self.wall_s += float(run.wall_seconds)
        self.spent_s += min(float(run.wall_seconds), float(given.wall_seconds))
        if run.timed_out and self.left() < MIN_RUN_S and not self.reserved_s:
            self.exhausted = True

    def note_hang(self, step: str, why: str) -> None:
        """Remember the first step that ran out of time (later ones are not recorded)."""
        if self.first_hang is None:
            self.first_hang = {"step": step, "why": why}

    def to_json(self) -> dict:
        """The scorecard's ``sandbox.budget``."""
        return {"total_s": round(self.total_s, 3), "spent_s": round(self.spent_s, 3),
                "wall_s": round(self.wall_s, 3), "runs": self.runs, "first_hang": self.first_hang,
                "exhausted": self.exhausted}


def after_hang_limits(steps: list[dict], reference_seconds: dict[str, float], step_limit: float) -> list[dict]:
    """``steps`` (wire) each with ``after_hang_s``: ``AFTER_HANG_FACTOR`` times the reference's time for
    the step (``reference_seconds``, by id; a step it lacks gets the floor), at least
    ``AFTER_HANG_FLOOR_S``, at most the step's own limit (``timeout_s``, else ``step_limit``)."""
    out = []
    for step in steps:
        own = float(step.get("timeout_s") or step_limit)
        ref = reference_seconds.get(step["id"]) or 0.0
        out.append({**step, "after_hang_s": round(min(own, max(AFTER_HANG_FLOOR_S, AFTER_HANG_FACTOR * ref)), 3)})
    return out


def first_step_timeout(steps: list[dict], results: RunResults) -> str | None:
    """Id of the first step (in plan order) whose report is a ``StepTimeout``, or None."""
    for step in steps:
        got = results.steps.get(step["id"])
        if got is not None and (got.report.get("exception") or {}).get("type") == "StepTimeout":
            return step["id"]
    return None


def _objects_used(step: dict) -> set[str]:
    """Names of kept objects a wire step needs: its target (method, getattr) and object arguments."""
    used = {step["target"]} if step.get("op") in ("method", "getattr") else set()
    for arg in [*step.get("args", []), *step.get("kwargs", {}).values()]:
        if "object" in arg:
            used.add(arg["object"])
    return used


def _object_made(step: dict) -> str | None:
    """The kept object a ``construct`` step makes (``save_as``, else its id)."""
    return (step.get("save_as") or step["id"]) if step.get("op") == "construct" else None


def continuation(steps: list[dict], hung: str) -> tuple[list[dict], list[str]]:
    """The plan steps to run after step ``hung`` timed out.

    Args:
        steps: the plan's wire steps, in order.
        hung: id of the step that was running when the run's budget ran out.

    Returns:
        ``(steps to run, ids left unrun)``: replays of the earlier steps that build each kept object
        a later step needs, then every later step whose objects are not tainted by ``hung``; the ids
        of later steps that need an object ``hung`` acted on (their state is unknown).

    Raises:
        KeyError: ``hung`` is not a step of ``steps``.
    """
    ids = [s["id"] for s in steps]
    if hung not in ids:
        raise KeyError(hung)
    index = ids.index(hung)
    history: dict[str, list[int]] = {}  # object -> indices of the steps before `hung` that made or used it
    for i, step in enumerate(steps[:index]):
        for name in {*_objects_used(step), *filter(None, [_object_made(step)])}:
            history.setdefault(name, []).append(i)
    tainted = _objects_used(steps[index]) | set(filter(None, [_object_made(steps[index])]))
    made_later: set[str] = set()
    replay: set[int] = set()
    keep, unrun = [], []
    for step in steps[index + 1:]:
        needs = _objects_used(step) - made_later
        if needs & tainted:
            unrun.append(step["id"])
            tainted |= set(filter(None, [_object_made(step)]))
            continue
        for name in needs:
            for i in history.get(name, []):
                replay.add(i)
                # an earlier step that used this object may have needed others too
                for other in _objects_used(steps[i]) - {name}:
                    replay.update(history.get(other, []))
        made = _object_made(step)
        if made:
            made_later.add(made)
        keep.append(step)
    return [steps[i] for i in sorted(replay)] + keep, unrun


def _timed_out_report(step_id: str, seconds: float) -> StepResult:
    """The report of a step that was running when the run's budget ran out: a ``StepTimeout``."""
    return StepResult(report={
        "id": step_id, "ok": False, "seconds": None, "modified_inputs": [], "output": None, "gradients": None,
        "exception": {"type": "StepTimeout", "traceback": "",
                      "message": f"step was still running when the run's time limit ({seconds:g} s) ran out; "
                                 "the steps after it ran in a fresh sandbox"}}, arrays={})


def run_with_restarts(backend: Sandbox, job: SandboxJob, limits: Limits,
                      say: Callable[[str], None] = lambda _m: None, budget: Budget | None = None,
                      annotate: Callable[[list[dict]], list[dict]] | None = None) -> tuple[SandboxRun, list[str]]:
    """Run ``job``; while a run ends on its time limit part-way through the plan (after a clean import),
    charge the step in flight a timeout and run the rest of the plan in a fresh sandbox.

    Args:
        budget: the grading's time budget, shared with its other calls (default: a fresh one for
            this call). Each run is given what is left of it (``Budget.limits_for_run``); with too
            little left no run starts and the steps not yet run stay unrun (``budget.exhausted``).
        annotate: called with the wire steps of a restart's plan; returns them with each step's
            ``after_hang_s`` (``after_hang_limits``). A restart's plan says ``"hung": true``, so the
            runner applies those limits from its first step.

    Returns:
        ``(run, restarted_after)``: one ``SandboxRun`` whose results merge every run's (first result
        of each step id wins; a replayed step's second result is ignored), whose output joins theirs,
        whose ``timed_out``/``exit_code``/``stopped`` are the last run's; and the ids of the steps
        that were charged a timeout by a restart. With no budget left for the first run, a run with
        no results and ``timed_out`` set.

    Raises:
        SandboxUnavailable: from the backend.
    """
    budget = budget if budget is not None else Budget.for_limits(limits)
    steps = list(job.plan["steps"])
    given = budget.limits_for_run(limits)
    if given is None:
        return SandboxRun(results=RunResults(), timed_out=True, exit_code=None), []
    run = backend.run(job, given)
    budget.charge(run, given)
    merged = run.results
    hung_in_run = first_step_timeout(steps, merged)
    if hung_in_run:
        budget.note_hang(hung_in_run, "it ran past its CPU limit (the runner stopped it)")
    outputs, truncated, seconds = [run.output], run.output_truncated, run.wall_seconds
    restarted: list[str] = []
    last = run
    idle = 0  # runs in a row that finished no new step: a submission that hangs on everything
    for _ in range(MAX_RUNS - 1):
        if (merged.done or not last.timed_out or last.oom_killed or last.stopped or last.infrastructure_error
                or not (merged.import_report or {}).get("ok") or idle >= 2):
            break
        pending = [s for s in steps if s["id"] not in merged.steps]
        if not pending:
            break
        hung = pending[0]["id"]
        merged.steps[hung] = _timed_out_report(hung, given.wall_seconds)
        budget.note_hang(hung, f"it was still running when the run's time limit ({given.wall_seconds:g} s) ran out")
        restarted.append(hung)
        rest, _unrun = continuation(steps, hung)
        if not any(s["id"] not in merged.steps for s in rest):
            merged.done = True  # nothing left that can run: the unrun steps are judged as not run
            break
        given = budget.limits_for_run(limits)
        if given is None:
            break  # the grading's budget is spent: the steps not run are judged as not run
        say(f"step {hung} ran out of time: running the remaining steps in a fresh sandbox")
        if annotate is not None:
            rest = annotate(rest)
        last = backend.run(replace(job, plan={**job.plan, "steps": rest, "hung": True}), given)
        budget.charge(last, given)
        if last.infrastructure_error:
            return last, restarted
        hung_in_run = first_step_timeout(rest, last.results)
        if hung_in_run and hung_in_run not in merged.steps:
            budget.note_hang(hung_in_run, "it ran past its CPU limit (the runner stopped it)")
        new = [step_id for step_id in last.results.steps if step_id not in merged.steps]
        idle = 0 if new else idle + 1
        for step_id, result in last.results.steps.items():
            merged.steps.setdefault(step_id, result)
        merged.problems += last.results.problems
        merged.forbidden_imports += [m for m in last.results.forbidden_imports if m not in merged.forbidden_imports]
        merged.done = last.results.done  # steps left unrun (tainted by the hung one) are judged as not run
        outputs.append(last.output)
        truncated = truncated or last.output_truncated
        seconds += last.wall_seconds
    if not restarted:
        return run, restarted
    text = "\n[the runner was restarted after a step ran out of time]\n".join(outputs)
    return replace(last, results=merged, output=text, output_truncated=truncated, wall_seconds=seconds), restarted
