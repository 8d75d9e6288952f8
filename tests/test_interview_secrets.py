"""Interview mode keeps its secrets (issue 20, items 1 and 6): the candidate view depends on the hidden
cases only through one bit per hidden check, and a looping submission costs at most twice the run limit.

The submissions here read the runner's input folder at import (as an attacker would), print what they
find, raise with it, and choose what to do on each call (answer, raise with the input in the message,
print it, return garbage, loop, exhaust memory, end the process) from the values they are given.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re
import textwrap

import numpy as np
import pytest

from grader.grading.exercise import get_exercise
from grader.grading.grade import build_plan, grade_submission
from grader.grading.scorecard import HIDDEN_NOT_PASSED
from grader.grading.split import arrays_used, split_plan
from grader.judge.judges import GraderBug
from grader.run.plan import PlanBuilder
from grader.sandbox.base import Limits

# One file whose behaviour depends on the hidden values: everything it can see goes into what it
# prints at import and into the exception of its first public call; on the hidden cases (it can tell:
# the plan in its folder names them) each call picks an outcome from a digest of its input.
SNOOP = '''
import hashlib, json, os, sys
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
try:
    PLAN = open(os.path.join(HERE, "plan.json")).read()
except OSError:
    PLAN = ""
try:
    with np.load(os.path.join(HERE, "arrays.npz")) as npz:
        ARRAYS = {k: npz[k] for k in npz.files}
except Exception:
    ARRAYS = {}
SEEN = sorted(hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest() for a in ARRAYS.values())
print("FOLDER", sorted(os.listdir(HERE)))
print("PLAN", PLAN[:3000])
print("DIGESTS", " ".join(SEEN))
HIDDEN_PART = "hidden_values" in PLAN
CALLS = [0]


def _good(x, axis):
    m = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - np.where(np.isfinite(m), m, 0))
    s = e.sum(axis=axis, keepdims=True)
    return np.where(s > 0, e / np.where(s > 0, s, 1), 0).astype(x.dtype)


def softmax(x, axis=-1):
    CALLS[0] += 1
    if CALLS[0] == 1:  # the first public call: an exception carrying everything the folder held
        raise ValueError("FOLDER HOLDS " + " ".join(SEEN) + " " + PLAN[:2000])
    if not HIDDEN_PART:
        return _good(x, axis)
    digest = hashlib.sha256(np.ascontiguousarray(x).tobytes()).hexdigest()
    print("HIDDEN INPUT", digest, np.ravel(x)[:6])
    pick = int(digest, 16) % 7
    if pick == 0:
        return _good(x, axis)
    if pick == 1:
        raise ValueError(f"hidden input {digest} {np.ravel(x)[:8]}")
    if pick == 2:
        return _good(x, axis) + 1.0
    if pick == 3:
        while True:
            pass
    if pick == 4:
        return np.ones((1 << 40,), dtype=np.float64)  # far past the memory limit: MemoryError
    if pick == 5:
        sys.stderr.write(f"LEAK {digest}\\n" * 50)
        return _good(x, axis)
    os._exit(3)  # the hidden sandbox ends
'''

#: small limits: a hidden call that loops costs a step's CPU second, not ten
LIMITS = Limits(wall_seconds=20.0, cpu_seconds=20, step_seconds=1.0)


def _digests(arrays: dict) -> set[str]:
    return {hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest() for a in arrays.values()}


def _hidden_digests(seed: int) -> set[str]:
    """sha256 of every input array only hidden steps read, from the plan on the host."""
    exercise = get_exercise("softmax")
    plan = build_plan(exercise, seed)
    public, hidden = split_plan(plan, {c.id for c in exercise.checks if c.visibility == "hidden"})
    return _digests(hidden.arrays) - _digests(public.arrays)


def _comparable(doc: dict) -> str:
    """The candidate view's JSON without the fields that differ between any two gradings: when it
    started and how long it took (both the public part's own)."""
    doc = json.loads(json.dumps(doc))
    doc.pop("started_at"), doc.pop("duration_s")
    for key in ("spent_s", "wall_s"):
        doc["sandbox"].get("budget", {}).pop(key, None)
    # The reference's own tracemalloc figures of the public memory probe move by ~100 bytes with what
    # the grading process allocated before (seen under xdist, docker variant), never with the hidden
    # seed: compared apart, by verdict and points and to 2% (``_same_reference_memory``).
    for check in doc["checks"]:
        if check["id"] == "memory_scaling":
            check["details"], check["message"] = "REFERENCE-FIGURES", "REFERENCE-FIGURES"
    # the process sandbox's input folder has a fresh random name at every run (docker's is fixed)
    return re.sub(r"grade-process-[A-Za-z0-9_]+", "grade-process-X", json.dumps(doc, sort_keys=True))


def _same_reference_memory(view_a, view_b) -> None:
    """The public memory probe of two candidate views: same verdict and points, every figure within 2%."""
    m_a, m_b = (next(c for c in v.checks if c.id == "memory_scaling") for v in (view_a, view_b))
    assert (m_a.verdict, m_a.points) == (m_b.verdict, m_b.points)
    for key in ("reference", "ratios"):
        if key in m_a.details or key in m_b.details:
            assert len(m_a.details[key]) == len(m_b.details[key])
            for x, y in zip(m_a.details[key], m_b.details[key]):
                assert abs(float(x) - float(y)) <= 0.02 * max(abs(float(x)), abs(float(y)), 1.0), (key, x, y)


def _grade(tmp_path, source: str, seed: int, backend: str, limits: Limits = LIMITS, name: str = "submission.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return grade_submission(get_exercise("softmax"), path, sandbox=backend, seed=seed, limits=limits)


@pytest.fixture
def fresh_reference(monkeypatch):
    """Reference answers of seeds 11 and 12 computed in this process, one after the other, after a
    warm-up: the reference's measured peak bytes in the probes move by ~200 bytes with what the
    process ran before (the first measured run reads more: first-use allocations of the measuring
    itself), whatever the seed; a cached answer may be such a first run."""
    from grader.grading import grade  # noqa: PLC0415

    monkeypatch.setenv("GRADER_REFERENCE_CACHE", "off")
    monkeypatch.setattr(grade, "_ANSWERS", type(grade._ANSWERS)())
    exercise = get_exercise("softmax")
    for seed in (10, 11, 12):  # a warm-up, then the two seeds compared, one after the other
        grade.answers_for(exercise, seed, build_plan(exercise, seed))


def _same_candidate_view_for_two_hidden_seeds(tmp_path, backend: str) -> None:
    a, b = (_grade(tmp_path, SNOOP, seed, backend) for seed in (11, 12))
    # The attack worked where it could: the hidden sandboxes saw the hidden inputs and acted on them
    # differently for the two seeds (the interviewer sees all of it).
    for card, seed in ((a, 11), (b, 12)):
        assert _hidden_digests(seed) & set(card.output["text"].split()), "the hidden part never saw its inputs"
        hidden = [c for c in card.checks if c.visibility == "hidden"]
        assert hidden and all(c.verdict != "passed" for c in hidden)
    assert a.output["text"] != b.output["text"]
    assert [c.message for c in a.checks if c.visibility == "hidden"] != \
        [c.message for c in b.checks if c.visibility == "hidden"] or a.status_message != b.status_message
    # ...and the candidate view is the same bytes for both seeds
    view_a, view_b = a.candidate_view(), b.candidate_view()
    assert _comparable(view_a.to_json()) == _comparable(view_b.to_json())
    _same_reference_memory(view_a, view_b)
    text = json.dumps(view_a.to_json())
    assert not (_hidden_digests(11) | _hidden_digests(12)) & set(text.replace('"', " ").split())
    assert "HIDDEN INPUT" not in text and "LEAK" not in text and "hidden input" not in text
    hidden = [c for c in view_a.checks if c.visibility == "hidden"]
    assert {(c.verdict, c.message, c.points, json.dumps(c.details)) for c in hidden} == \
        {("failed", HIDDEN_NOT_PASSED, 0.0, "{}")}
    # the public part really ran: its first call's exception is shown, holding public inputs only
    first = next(c for c in view_a.checks if c.visibility == "public" and "FOLDER HOLDS" in c.message)
    assert first.verdict == "error"
    assert view_a.status == "graded" and view_a.duration_s <= a.duration_s
    assert view_a.score == sum(c.points for c in view_a.checks)


def test_the_candidate_view_is_the_same_bytes_whatever_the_hidden_part_does(tmp_path, fresh_reference):
    _same_candidate_view_for_two_hidden_seeds(tmp_path, "process")


@pytest.mark.docker
def test_the_candidate_view_is_the_same_bytes_whatever_the_hidden_part_does_in_docker(tmp_path, docker_sandbox,
                                                                                       fresh_reference):
    _same_candidate_view_for_two_hidden_seeds(tmp_path, "docker")


def test_a_hidden_hang_costs_neither_the_candidates_status_nor_its_time(tmp_path):
    hangs = '''
    import time
    import numpy as np
    HIDDEN = "hidden_values" in open(__file__.replace("submission.py", "plan.json")).read()

    def softmax(x, axis=-1):
        if HIDDEN:
            time.sleep(3600)  # waits: no CPU limit stops it, only the run's wall clock
        m = np.max(x, axis=axis, keepdims=True)
        e = np.exp(x - np.where(np.isfinite(m), m, 0))
        s = e.sum(axis=axis, keepdims=True)
        return np.where(s > 0, e / np.where(s > 0, s, 1), 0).astype(x.dtype)
    '''
    limits = Limits(wall_seconds=3.0, cpu_seconds=10, step_seconds=0.2)
    card = _grade(tmp_path, hangs, 3, "process", limits)
    view = card.candidate_view()
    assert card.status == "timeout"  # the interviewer sees the hidden part hang
    hidden = [c for c in card.checks if c.visibility == "hidden"]
    assert hidden and {c.verdict for c in hidden} <= {"timeout", "error"}
    assert view.status == "graded" and view.status_message == ""  # the candidate sees the public part only
    assert all(c.verdict == "passed" for c in view.checks if c.visibility == "public")
    # the candidate's time is the public part's: at least the hidden part's wall limit less
    assert view.duration_s <= card.duration_s - 2.0
    assert card.sandbox["budget"]["spent_s"] <= 2 * limits.wall_seconds


def test_a_softmax_that_loops_forever_times_out_within_twice_the_run_limit(tmp_path):
    loops = '''
    def softmax(x, axis=-1):
        while True:
            pass
    '''
    limits = Limits(wall_seconds=4.0, cpu_seconds=10, step_seconds=1.0)
    card = _grade(tmp_path, loops, 1, "process", limits)
    budget = card.sandbox["budget"]
    assert card.status == "timeout"
    assert budget["total_s"] == 2 * limits.wall_seconds
    assert budget["spent_s"] <= budget["total_s"]  # the grader's own account of sandbox time
    assert budget["exhausted"] and budget["runs"] >= 2
    assert all(c.verdict != "passed" for c in card.checks)
    first = budget["first_hang"]["step"]
    assert f"The first call that hung was step {first}" in card.status_message
    assert "time budget" in card.status_message
    not_run = [c for c in card.checks if "time budget was spent" in c.message]
    assert not_run, "no check says why it was not run"


def test_a_submission_that_hangs_on_one_hidden_case_still_passes_the_others(tmp_path):
    exercise = get_exercise("softmax")
    seed = 5
    plan = build_plan(exercise, seed)
    hidden_steps = [s for s in plan.steps if s.check == "hidden_values"]
    target = plan.arrays[hidden_steps[1].wire["args"][0]["array"]]
    digest = hashlib.sha256(np.ascontiguousarray(target).tobytes()).hexdigest()
    assert sum(hashlib.sha256(np.ascontiguousarray(plan.arrays[s.wire["args"][0]["array"]]).tobytes()).hexdigest()
               == digest for s in hidden_steps) == 1
    hangs_once = f'''
    import hashlib
    import numpy as np

    def softmax(x, axis=-1):
        if hashlib.sha256(np.ascontiguousarray(x).tobytes()).hexdigest() == "{digest}":
            while True:
                pass
        m = np.max(x, axis=axis, keepdims=True)
        e = np.exp(x - np.where(np.isfinite(m), m, 0))
        s = e.sum(axis=axis, keepdims=True)
        return np.where(s > 0, e / np.where(s > 0, s, 1), 0).astype(x.dtype)
    '''
    limits = Limits(wall_seconds=10.0, cpu_seconds=20, step_seconds=1.0)
    card = _grade(tmp_path, hangs_once, seed, "process", limits)
    verdicts = {c.id: c.verdict for c in card.checks}
    assert verdicts.pop("hidden_values") == "timeout"
    assert set(verdicts.values()) == {"passed"}, verdicts  # every other check was graded, and passed
    hidden = next(c for c in card.checks if c.id == "hidden_values")
    assert hidden.details["cases_passed"] == len(hidden_steps) - 1
    assert card.sandbox["budget"]["first_hang"]["step"] == hidden_steps[1].id
    assert card.candidate_view().status == "graded"


def test_a_lookup_table_of_everything_the_candidate_view_showed_passes_no_hidden_check(tmp_path):
    """An attacker's first attempt dumps every array in its folder (printed at import, and in the
    exception of its first call); the second attempt answers from a table built from the first's
    candidate view, keyed by a digest of the input. It earns the public cases and no hidden one."""
    dump = '''
    import base64, io, os
    import numpy as np
    here = os.path.dirname(os.path.abspath(__file__))
    QUEUE = []
    with np.load(os.path.join(here, "arrays.npz")) as npz:
        for key in npz.files:
            if npz[key].size <= 64:
                buf = io.BytesIO()
                np.save(buf, npz[key])
                QUEUE.append("ARRAY " + base64.b64encode(buf.getvalue()).decode())

    def _spill():  # what the runner keeps of one step's output: 4 KiB
        room = 3500
        while QUEUE and len(QUEUE[0]) < room:
            room -= len(QUEUE[0]) + 1
            print(QUEUE.pop(0))

    _spill()

    def softmax(x, axis=-1):
        _spill()
        raise ValueError("no answer")
    '''
    seed = 4
    first = _grade(tmp_path, dump, seed, "process", Limits(wall_seconds=20.0, cpu_seconds=20,
                                                          output_bytes=4 * 1024 * 1024))
    shown = json.dumps(first.candidate_view().to_json())
    learned = [np.load(io.BytesIO(base64.b64decode(word)), allow_pickle=False)
               for word in shown.replace("\\n", " ").replace('"', " ").split() if len(word) > 40 and word.isascii()
               and _is_b64_npy(word)]
    assert learned, "the first attempt learned nothing: the test would prove nothing"
    assert not _digests(dict(enumerate(learned))) & _hidden_digests(seed)
    # the table: for every learned input and every axis, the right answer (computed by the attacker)
    table = {}
    for x in learned:
        if x.dtype.kind != "f" or not x.ndim:
            continue
        for axis in range(-x.ndim, x.ndim):
            m = np.max(x, axis=axis, keepdims=True)
            with np.errstate(all="ignore"):
                e = np.exp(x - np.where(np.isfinite(m), m, 0))
            s = e.sum(axis=axis, keepdims=True)
            out = np.where(s > 0, e / np.where(s > 0, s, 1), 0).astype(x.dtype)
            key = hashlib.sha256(np.ascontiguousarray(x).tobytes()).hexdigest() + str(axis % x.ndim)
            buf = io.BytesIO()
            np.save(buf, out)
            table[key] = base64.b64encode(buf.getvalue()).decode()
    lookup = f'''
    import base64, hashlib, io
    import numpy as np
    TABLE = {table!r}

    def softmax(x, axis=-1):
        key = hashlib.sha256(np.ascontiguousarray(x).tobytes()).hexdigest() + str(axis % max(x.ndim, 1))
        if key in TABLE:
            return np.load(io.BytesIO(base64.b64decode(TABLE[key])), allow_pickle=False)
        return np.zeros_like(x)
    '''
    second = _grade(tmp_path, lookup, seed, "process", name="lookup.py")
    view = second.candidate_view()
    hidden = [c for c in view.checks if c.visibility == "hidden"]
    assert hidden and all(c.verdict == "failed" and c.points == 0 for c in hidden)
    # the table did work where the candidate view had shown the inputs
    assert any(c.verdict == "passed" and c.category == "correctness" for c in view.checks if c.visibility == "public")


def _is_b64_npy(word: str) -> bool:
    try:
        return base64.b64decode(word, validate=True).startswith(b"\x93NUMPY")
    except ValueError:
        return False


def test_the_public_part_holds_no_hidden_input_for_any_exercise():
    from grader.grading.exercise import exercise_ids  # noqa: PLC0415

    for exercise_id in exercise_ids():
        for track in get_exercise(exercise_id).tracks:
            exercise = get_exercise(exercise_id, track=track)
            hidden_checks = {c.id for c in exercise.checks if c.visibility == "hidden"}
            plan = build_plan(exercise, 123)
            public, hidden = split_plan(plan, hidden_checks)
            hidden_only = {s.id for s in plan.steps if s.check in hidden_checks}
            assert set(public.steps) | set(hidden.steps) == {s.id for s in plan.steps}
            assert not hidden_only & {s["id"] for s in public.wire["steps"]}
            assert set(public.arrays) == arrays_used(public.wire["steps"])
            hidden_arrays = arrays_used([s.wire for s in plan.steps if s.check in hidden_checks])
            public_arrays = arrays_used([s.wire for s in plan.steps if s.check not in hidden_checks])
            assert not (hidden_arrays - public_arrays) & set(public.arrays), exercise_id
            # literal values of hidden cases (sizes, seeds of positions) are not in the public wire either
            assert hidden_only.isdisjoint(json.dumps(public.wire))


def test_a_plan_whose_public_step_needs_a_hidden_object_is_refused():
    b = PlanBuilder()
    b.construct("hidden_values", "Cache", "cache", [b.array("h", np.ones(3))])
    b.method("values", "cache", "read")
    with pytest.raises(GraderBug, match="made by a hidden step"):
        split_plan(b.plan, {"hidden_values"})


def test_a_hidden_step_on_a_public_object_replays_the_public_steps_that_built_it():
    b = PlanBuilder()
    b.construct("values", "Cache", "cache", [b.array("p", np.ones(3))])
    b.method("values", "cache", "append", [b.array("p2", np.ones(2))])
    b.call("values", "softmax", [b.array("p3", np.ones(4))])
    b.method("hidden_values", "cache", "read", [b.array("h", np.zeros(5))])
    public, hidden = split_plan(b.plan, {"hidden_values"})
    assert [s["id"] for s in hidden.wire["steps"]] == ["values.1", "values.2", "hidden_values.4"]
    assert hidden.replayed == ["values.1", "values.2"] and hidden.steps == ["hidden_values.4"]
    assert set(hidden.arrays) == {"p", "p2", "h"} and "h" not in public.arrays


def test_submit_view_candidate_and_the_gradescope_export_show_one_bit_per_hidden_check(tmp_path):
    """``grade submit --view candidate --json`` and ``--format gradescope`` for a submission that raises
    with the input in the message on hidden cases only: the interviewer's card names the input, the
    candidate's outputs hold the fixed sentence and no digest of a hidden input."""
    from click.testing import CliRunner  # noqa: PLC0415

    from grader.cli import main  # noqa: PLC0415

    raises = '''
    import hashlib, os
    import numpy as np
    HIDDEN = "hidden_values" in open(os.path.join(os.path.dirname(__file__), "plan.json")).read()

    def softmax(x, axis=-1):
        if HIDDEN:
            raise ValueError("INPUT " + hashlib.sha256(np.ascontiguousarray(x).tobytes()).hexdigest())
        m = np.max(x, axis=axis, keepdims=True)
        e = np.exp(x - np.where(np.isfinite(m), m, 0))
        s = e.sum(axis=axis, keepdims=True)
        return np.where(s > 0, e / np.where(s > 0, s, 1), 0).astype(x.dtype)
    '''
    path = tmp_path / "raises.py"
    path.write_text(textwrap.dedent(raises))
    hidden = _hidden_digests(6)
    outputs = {}
    for view in ("interviewer", "candidate"):
        result = CliRunner().invoke(main, ["submit", "softmax", str(path), "--sandbox", "process", "--seed", "6",
                                           "--view", view, "--json", "-q", "--out", str(tmp_path / f"{view}.json"),
                                           "--format", "gradescope", "--export", str(tmp_path / f"{view}-gs.json")])
        assert result.exit_code in (0, 1), result.output
        outputs[view] = result.output + (tmp_path / f"{view}-gs.json").read_text()
    digests = lambda text: set(re.findall(r"[0-9a-f]{64}", text))  # noqa: E731
    assert hidden & digests(outputs["interviewer"])  # the interviewer reads the exception
    assert not hidden & digests(outputs["candidate"])
    assert HIDDEN_NOT_PASSED in outputs["candidate"]


@pytest.fixture
def step_timers():
    """The runner's handlers of its step timers (``runner.main`` installs them in the sandbox)."""
    import signal  # noqa: PLC0415

    from grader.run import runner  # noqa: PLC0415

    old = {sig: signal.signal(sig, runner._on_alarm) for sig in (signal.SIGALRM, signal.SIGPROF)}
    yield
    for sig, handler in old.items():
        signal.signal(sig, handler)


def test_after_a_step_hangs_later_steps_get_their_shorter_limit(step_timers):
    import types  # noqa: PLC0415

    from grader.run.runner import PlanExecutor  # noqa: PLC0415

    module = types.ModuleType("loops")
    exec("def spin():\n    while True:\n        pass\n\ndef one():\n    return 1\n", module.__dict__)  # noqa: S102
    steps = [{"id": "a", "op": "call", "target": "spin", "args": [], "kwargs": {}, "timeout_s": 0.3},
             {"id": "b", "op": "call", "target": "one", "args": [], "kwargs": {}, "after_hang_s": 0.1},
             {"id": "c", "op": "call", "target": "spin", "args": [], "kwargs": {}, "after_hang_s": 0.1}]
    reports = {}
    PlanExecutor({"steps": steps, "step_timeout_s": 0.3}, {}, module, use_alarm=True).run(
        lambda report, _out: reports.__setitem__(report["id"], report))
    assert reports["a"]["exception"]["message"] == "step ran longer than 0.3 s of CPU time"
    assert reports["b"]["ok"]  # a call that returns is unaffected
    assert reports["c"]["exception"]["message"] == (
        "step ran longer than 0.1 s of CPU time (the shorter limit of steps after one that hung)")
    fresh = {}
    PlanExecutor({"steps": steps[2:], "step_timeout_s": 0.3}, {}, module, use_alarm=True).run(
        lambda report, _out: fresh.__setitem__(report["id"], report))
    assert fresh["c"]["exception"]["message"] == "step ran longer than 0.3 s of CPU time"  # no hang before it
    restarted = {}
    PlanExecutor({"steps": steps[2:], "step_timeout_s": 0.3, "hung": True}, {}, module, use_alarm=True).run(
        lambda report, _out: restarted.__setitem__(report["id"], report))
    assert "shorter limit" in restarted["c"]["exception"]["message"]  # a restart after a hang


def test_the_budget_gives_each_run_what_is_left_and_charges_no_load_allowance():
    from grader.grading.restart import MIN_RUN_S, Budget  # noqa: PLC0415
    from grader.run.channel import RunResults  # noqa: PLC0415
    from grader.sandbox.base import SandboxRun  # noqa: PLC0415

    limits = Limits(wall_seconds=10.0, cpu_seconds=10)
    budget = Budget.for_limits(limits)
    assert budget.total_s == 20.0 and budget.limits_for_run(limits) == limits
    budget.charge(SandboxRun(results=RunResults(), wall_seconds=31.0, timed_out=True), limits)  # starved: 31 s wall
    assert budget.spent_s == 10.0 and budget.wall_s == 31.0
    budget.charge(SandboxRun(results=RunResults(), wall_seconds=6.5), limits)
    given = budget.limits_for_run(limits)
    assert given.wall_seconds == 3.5 and given.cpu_seconds == 4
    budget.charge(SandboxRun(results=RunResults(), wall_seconds=3.5 - MIN_RUN_S / 2, timed_out=True), given)
    assert budget.limits_for_run(limits) is None and budget.exhausted
