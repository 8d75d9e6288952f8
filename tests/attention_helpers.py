"""Helpers shared by test_mha and test_gqa: judge a sample in-process (no sandbox), fast."""

from pathlib import Path

from grader.grading.exercise import get_exercise
from grader.grading.grade import answers_for, at_float32, build_plan, run_in_process
from grader.judge.judges import JudgeContext
from grader.run.runner import load_submission

ROOT = Path(__file__).resolve().parent.parent


def judge_in_process(exercise_id: str, path: Path, seed: int = 7, track: str | None = None) -> dict:
    """Outcomes by check id for the module at ``path`` (graded in ``track``, None: the default one),
    judged exactly as the host judges a run."""
    ex = get_exercise(exercise_id, track=track)
    plan = build_plan(ex, seed)
    expected, golden, baselines, float32 = answers_for(ex, seed, plan)  # the host's answers, baselines included
    float32 = at_float32(ex, plan, float32)  # float64 cases outside the float64 check at float32 tolerance
    module = load_submission(str(path), f"sample_{exercise_id}_{path.stem}")
    got = run_in_process(plan.wire(), plan.arrays, module, str(path))
    outcomes: dict = {}
    for step in plan.steps:
        if step.judge is None:  # probe steps are judged by the probes, from measurements
            continue
        ctx = JudgeContext(step=step, plan=plan, got=got.steps.get(step.id), expected=expected.steps[step.id],
                           golden=golden.steps[step.id], candidate_steps=got.steps,
                           expected_steps=expected.steps, golden_steps=golden.steps,
                           baselines=[b.steps[step.id] for b in baselines
                                      if step.id in b.steps and b.steps[step.id].report.get("ok")],
                           float32=float32.get(step.id))
        outcomes.setdefault(step.check, []).append(step.judge(ctx))
    return outcomes


def failed(outcomes: dict) -> set:
    """Check ids with at least one case charged: not passed, and not skipped without charge (a gradient
    case whose forward is wrong)."""
    return {cid for cid, outs in outcomes.items()
            if any(o.verdict != "passed" and o.details.get("charged") is not False for o in outs)}


def messages(outcomes: dict, check: str) -> str:
    """All messages of one check, joined."""
    return "\n".join(o.message for o in outcomes[check])
