"""The positional_encoding exercise: the reference against the formula by hand, the plan, diagnoses."""

import importlib.util
import math

import numpy as np
import pytest

from attention_helpers import ROOT, failed, judge_in_process, messages
from grader.grading.exercise import get_exercise
from grader.grading.grade import build_plan, run_in_process
from grader.judge.judges import JudgeContext
from grader.run.runner import load_submission

SAMPLES = ROOT / "submissions" / "samples" / "positional_encoding"


def _reference():
    spec = importlib.util.spec_from_file_location("test_reference_pe", ROOT / "reference" / "positional_encoding.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ref = _reference()


def judge_track(track: str, path, seed: int = 7) -> dict:
    """Outcomes by check id for the module at ``path`` graded in ``track``, judged as the host judges."""
    ex = get_exercise("positional_encoding", track=track)
    plan = build_plan(ex, seed)
    expected = run_in_process(plan.wire(), plan.arrays, ex.load_reference())
    gw, ga = plan.golden()
    golden = run_in_process(gw, ga, ex.load_reference())
    got = run_in_process(plan.wire(), plan.arrays, load_submission(str(path), f"pe_{track}_{path.stem}"), str(path))
    outcomes: dict = {}
    for step in plan.steps:
        if step.judge is not None:
            ctx = JudgeContext(step=step, plan=plan, got=got.steps.get(step.id), expected=expected.steps[step.id],
                               golden=golden.steps[step.id], candidate_steps=got.steps,
                               expected_steps=expected.steps, golden_steps=golden.steps)
            outcomes.setdefault(step.check, []).append(step.judge(ctx))
    return outcomes


def _by_hand(p: int, column: int, d_model: int) -> float:
    """The paper's formula for one entry with Python's math module (float64 scalars)."""
    i = column // 2
    angle = p / 10000 ** (2 * i / d_model)
    return math.sin(angle) if column % 2 == 0 else math.cos(angle)


@pytest.mark.parametrize("seq_len,d_model,offset", [(5, 8, 0), (3, 6, 11), (4, 64, 999_996), (2, 512, 123_456)])
def test_reference_equals_the_formula_by_hand_rounded_to_float32(seq_len, d_model, offset):
    pe = ref.sinusoidal_positional_encoding(seq_len, d_model, offset)
    assert pe.dtype == np.float32 and pe.shape == (seq_len, d_model)
    for r in range(seq_len):
        for c in range(d_model):
            # right to float32 rounding of the float64 value: the same float32 number, or one ulp off
            want = np.float32(_by_hand(offset + r, c, d_model))
            assert abs(float(pe[r, c]) - float(want)) <= float(np.spacing(np.float32(abs(want)) + np.float32(1e-30)))


def test_worked_values_at_position_one():
    pe = ref.sinusoidal_positional_encoding(2, 4)
    # row 0 (p = 0): sin 0 = 0, cos 0 = 1; row 1 (p = 1): angles 1 and 1/100
    expected = np.array([[0, 1, 0, 1], [math.sin(1), math.cos(1), math.sin(0.01), math.cos(0.01)]], dtype=np.float32)
    np.testing.assert_array_equal(pe, expected)


def test_each_pair_lies_on_the_unit_circle_and_rows_shift_with_offset():
    pe = ref.sinusoidal_positional_encoding(30, 16, 7).astype(np.float64)
    np.testing.assert_allclose(pe[:, 0::2] ** 2 + pe[:, 1::2] ** 2, 1.0, atol=1e-6)
    whole = ref.sinusoidal_positional_encoding(37, 16)
    np.testing.assert_array_equal(whole[7:], ref.sinusoidal_positional_encoding(30, 16, 7))


def test_float32_angles_are_visibly_wrong_at_large_positions():
    """The accuracy rule is not vacuous: a float32 angle near 10^6 misses the exact value by more than atol 1e-5."""
    p32 = np.float32(999_999) * np.float32(10000.0) ** np.float32(-2 / 64)
    exact = math.sin(999_999 * 10000.0 ** (-2 / 64))
    assert abs(math.sin(float(p32)) - exact) > 1e-4
    pe = ref.sinusoidal_positional_encoding(1, 64, 999_999)
    assert abs(float(pe[0, 2]) - exact) < 1e-7


@pytest.mark.parametrize("args", [(3, 5), (2, 1), (-1, 8), (4, 8, -3)])
def test_reference_rejects_bad_arguments(args):
    with pytest.raises(ValueError):
        ref.sinusoidal_positional_encoding(*args)


def test_plan_covers_every_check():
    ex = get_exercise("positional_encoding")
    plan = build_plan(ex, seed=5)
    assert {s.check for s in plan.steps} == {c.id for c in ex.checks}
    offsets = [s.wire["args"][2]["value"] for s in plan.steps if s.check == "large_positions"]
    assert max(o + s.wire["args"][0]["value"] - 1 for o, s in
               zip(offsets, [s for s in plan.steps if s.check == "large_positions"])) == 1_000_000


@pytest.mark.parametrize("sample", sorted(p.name for p in SAMPLES.glob("correct_*.py")))
def test_correct_samples_pass_every_check(sample):
    assert failed(judge_in_process("positional_encoding", SAMPLES / sample)) == set()


@pytest.mark.parametrize("sample,check,phrase", [
    ("bug_concat_halves.py", "values", "tensor2tensor / MAE layout"),
    ("bug_exponent_i.py", "values", "10000^(i/d_model) for pair i"),
    ("bug_column_exponent.py", "values", "its own exponent j/d_model"),
    ("bug_sin_cos_swapped.py", "values", "sin and cos were swapped"),
    ("bug_offset_ignored.py", "offset", "the offset was ignored"),
    ("bug_float32_angles.py", "large_positions", "only to the precision of float32 angles"),
    ("bug_no_odd_check.py", "odd_d_model", "Expected ValueError"),
    ("bug_float64_result.py", "dtype_float32", "wrong dtype: got float64, expected float32"),
])
def test_wrong_sample_fails_its_check_with_the_named_mistake(sample, check, phrase):
    outcomes = judge_in_process("positional_encoding", SAMPLES / sample)
    assert check in failed(outcomes)
    assert phrase in messages(outcomes, check)


def test_float32_angles_pass_the_small_positions_and_no_other_mistake_is_named():
    outcomes = judge_in_process("positional_encoding", SAMPLES / "bug_float32_angles.py")
    assert failed(outcomes) & {"values", "offset", "zero_length"} == set()
    text = messages(outcomes, "large_positions") + messages(outcomes, "hidden_values")
    for other in ("tensor2tensor", "swapped", "offset was ignored", "its own exponent", "for pair i"):
        assert other not in text


# -- the PyTorch track ----------------------------------------------------------------------------------

TORCH_SAMPLES = SAMPLES / "torch"


@pytest.mark.parametrize("seq_len,d_model,offset", [(6, 8, 0), (3, 64, 999_997), (5, 10, 31)])
def test_torch_reference_equals_the_formula_by_hand(seq_len, d_model, offset):
    torch = pytest.importorskip("torch")
    ref_t = get_exercise("positional_encoding", track="torch").load_reference()
    pe = ref_t.sinusoidal_positional_encoding(seq_len, d_model, offset)
    assert isinstance(pe, torch.Tensor) and pe.dtype == torch.float32 and tuple(pe.shape) == (seq_len, d_model)
    want = np.array([[_by_hand(offset + r, c, d_model) for c in range(d_model)] for r in range(seq_len)])
    np.testing.assert_allclose(pe.numpy(), want, rtol=0, atol=float(np.finfo(np.float32).eps))


@pytest.mark.parametrize("sample", sorted(p.name for p in TORCH_SAMPLES.glob("correct_*.py")))
def test_torch_correct_samples_pass_every_check(sample):
    assert failed(judge_track("torch", TORCH_SAMPLES / sample)) == set()


@pytest.mark.parametrize("sample,check,phrase", [
    ("bug_float32_angles.py", "large_positions", "only to the precision of float32 angles"),
    ("bug_concat_halves.py", "values", "tensor2tensor / MAE layout"),
    ("bug_offset_ignored.py", "offset", "the offset was ignored"),
    ("bug_exponent_i.py", "values", "10000^(i/d_model) for pair i"),
    ("bug_returns_numpy.py", "dtype_float32", "should be a torch.Tensor (this is the PyTorch track), got a NumPy array"),
    ("bug_returns_float64.py", "dtype_float32", "wrong dtype: got float64, expected float32"),
])
def test_torch_wrong_sample_fails_its_check_with_the_named_mistake(sample, check, phrase):
    outcomes = judge_track("torch", TORCH_SAMPLES / sample)
    assert check in failed(outcomes)
    assert phrase in messages(outcomes, check)


def test_a_tensor_fails_the_numpy_track():
    outcomes = judge_track("numpy", TORCH_SAMPLES / "correct_float64_arange.py")
    # the kind costs dtype_float32 alone (one mistake, one deduction): the values are right
    assert failed(outcomes) == {"dtype_float32"}
    assert "should be a NumPy array (this is the NumPy track), got a torch.Tensor" in \
        messages(outcomes, "dtype_float32")
