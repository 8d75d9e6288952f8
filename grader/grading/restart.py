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

from dataclasses import replace
from typing import Callable

from grader.run.channel import RunResults, StepResult
from grader.sandbox.base import Limits, Sandbox, SandboxJob, SandboxRun

#: Runs of one submission at most: the first, then restarts after hung steps.
MAX_RUNS = 4


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
                      say: Callable[[str], None] = lambda _m: None) -> tuple[SandboxRun, list[str]]:
    """Run ``job``; while a run ends on its time limit part-way through the plan (after a clean import),
    charge the step in flight a timeout and run the rest of the plan in a fresh sandbox.

    Returns:
        ``(run, restarted_after)``: one ``SandboxRun`` whose results merge every run's (first result
        of each step id wins; a replayed step's second result is ignored), whose output joins theirs,
        whose ``timed_out``/``exit_code``/``stopped`` are the last run's; and the ids of the steps
        that were charged a timeout by a restart.

    Raises:
        SandboxUnavailable: from the backend.
    """
    steps = list(job.plan["steps"])
    run = backend.run(job, limits)
    merged = run.results
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
        merged.steps[hung] = _timed_out_report(hung, limits.wall_seconds)
        restarted.append(hung)
        rest, _unrun = continuation(steps, hung)
        if not any(s["id"] not in merged.steps for s in rest):
            merged.done = True  # nothing left that can run: the unrun steps are judged as not run
            break
        say(f"step {hung} ran out of time: running the remaining steps in a fresh sandbox")
        last = backend.run(replace(job, plan={**job.plan, "steps": rest}), limits)
        if last.infrastructure_error:
            return last, restarted
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
