"""The rope exercise: the reference against complex multiplication, the plan, the property judge, diagnoses."""

import importlib.util
import math

import numpy as np
import pytest
import torch

from attention_helpers import ROOT, failed, judge_in_process, messages
from mutant_helpers import assert_named_as
from grader.grading.exercise import get_exercise
from grader.grading.grade import build_plan, run_in_process
from grader.judge.judges import JudgeContext
from grader.run.runner import load_submission

SAMPLES = ROOT / "submissions" / "samples" / "rope"


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ref = _load(ROOT / "reference" / "rope.py", "test_reference_rope")


def _complex_oracle(x: np.ndarray, positions, base: float = 10000.0) -> np.ndarray:
    """RoPE as complex multiplication in NumPy: z_i = x[i] + 1j * x[i + d/2] times exp(1j * p * base^(-2i/d))."""
    d = x.shape[-1]
    h = d // 2
    z = x[..., :h].astype(np.float64) + 1j * x[..., h:].astype(np.float64)
    angle = np.asarray(positions, dtype=np.float64)[:, None] * base ** (-2.0 * np.arange(h) / d)
    w = z * np.exp(1j * angle)
    return np.concatenate([w.real, w.imag], axis=-1)


@pytest.mark.parametrize("shape,positions,base", [
    ((2, 3, 5, 8), [0, 1, 2, 3, 4], 10000.0),
    ((4, 16), [100, 7, 4095, 0], 10000.0),
    ((1, 6, 12), [9, 3, 3, 0, 12, 300000], 500000.0),
])
def test_reference_equals_complex_multiplication_in_float64(shape, positions, base):
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    got = ref.apply_rope(x, torch.tensor(positions), base)
    # float64 rounds an angle near p by ~p * 2e-16 rad, whichever way the frequencies are formed
    atol = 1e-14 * (1 + max(positions))
    np.testing.assert_allclose(got.numpy(), _complex_oracle(x.numpy(), positions, base), rtol=1e-12, atol=atol)


def test_worked_example_by_hand():
    # d = 4: pairs (x0, x2) at angle p and (x1, x3) at angle p / 100
    x = torch.tensor([[1.0, 2.0, 3.0, 4.0]], dtype=torch.float64)
    got = ref.apply_rope(x, [2])
    a, b = 2.0, 0.02
    want = [1 * math.cos(a) - 3 * math.sin(a), 2 * math.cos(b) - 4 * math.sin(b),
            3 * math.cos(a) + 1 * math.sin(a), 4 * math.cos(b) + 2 * math.sin(b)]
    np.testing.assert_allclose(got[0].numpy(), want, rtol=1e-15)


def test_reference_scores_depend_only_on_the_position_difference_and_norms_are_kept():
    gen = torch.Generator().manual_seed(2)
    q, k = torch.randn(3, 8, generator=gen, dtype=torch.float64), torch.randn(5, 8, generator=gen, dtype=torch.float64)
    pq, pk = torch.tensor([3, 10, 40]), torch.tensor([0, 1, 2, 50, 7])
    s1 = ref.apply_rope(q, pq) @ ref.apply_rope(k, pk).T
    s2 = ref.apply_rope(q, pq + 1234) @ ref.apply_rope(k, pk + 1234).T
    torch.testing.assert_close(s1, s2, rtol=1e-10, atol=1e-10)
    torch.testing.assert_close(ref.apply_rope(q, pq).norm(dim=-1), q.norm(dim=-1))


def test_rotate_half_is_the_interleaved_layout_under_a_feature_permutation():
    """An independent identity: interleaved RoPE (GPT-J) on x permuted to [x0, x_h, x1, x_h+1, ...] is the
    rotate_half result permuted the same way."""
    d, h = 8, 4
    x = torch.randn(2, 6, d, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    perm = torch.tensor([j for i in range(h) for j in (i, i + h)])
    xp = x[..., perm]
    theta = torch.arange(6, dtype=torch.float64)[:, None] * 10000.0 ** (-2.0 * torch.arange(h) / d)
    z = torch.view_as_complex(xp.reshape(2, 6, h, 2).contiguous()) * torch.polar(torch.ones_like(theta), theta)
    gptj = torch.view_as_real(z).reshape(2, 6, d)
    torch.testing.assert_close(ref.apply_rope(x, list(range(6)))[..., perm], gptj)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_is_rotated_at_float32_and_cast_back(dtype):
    x = torch.randn(2, 5, 16, generator=torch.Generator().manual_seed(4)).to(dtype)
    got = ref.apply_rope(x, list(range(100, 105)))
    want = torch.from_numpy(_complex_oracle(x.double().numpy(), list(range(100, 105)))).to(dtype)
    assert got.dtype == dtype
    # rotating at float32 then rounding once: at most one unit in the last place of the half dtype
    assert ((got.double() - want.double()).abs() <= torch.finfo(dtype).eps * want.double().abs() + 1e-6).all()


def test_positions_of_any_integer_dtype_give_the_same_result():
    x = torch.randn(2, 4, 8, generator=torch.Generator().manual_seed(5))
    results = [ref.apply_rope(x, p) for p in ([3, 4, 5, 6], torch.tensor([3, 4, 5, 6], dtype=torch.int32),
                                              torch.tensor([3, 4, 5, 6], dtype=torch.uint8))]
    for r in results[1:]:
        torch.testing.assert_close(r, results[0], rtol=0, atol=0)


def test_gradient_is_the_transposed_rotation():
    x = torch.randn(3, 8, generator=torch.Generator().manual_seed(6), dtype=torch.float64, requires_grad=True)
    g = torch.randn(3, 8, generator=torch.Generator().manual_seed(7), dtype=torch.float64)
    ref.apply_rope(x, [5, 6, 7]).backward(g)
    # the inverse of a rotation is its transpose: rotating g by -theta (positions negated) is the gradient
    np.testing.assert_allclose(x.grad.numpy(), _complex_oracle(g.numpy(), [-5, -6, -7]), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape", [(2, 4, 7), (3, 1)])
def test_reference_rejects_odd_width(shape):
    with pytest.raises(ValueError, match="even"):
        ref.apply_rope(torch.zeros(shape), list(range(shape[-2])))


def test_plan_covers_checks_positions_types_and_half_dtypes():
    ex = get_exercise("rope")
    plan = build_plan(ex, seed=3)
    assert {s.check for s in plan.steps} == {c.id for c in ex.checks}
    dtypes = {a.get("dtype") for s in plan.wire()["steps"] for a in s["args"] if "tensor" in a}
    assert {"float16", "bfloat16", "float32", "float64", "int64", "int32", "int16", "uint8"} <= dtypes
    assert any(isinstance(s.wire["args"][1].get("value"), list) for s in plan.steps if s.wire["args"][1:])


@pytest.mark.parametrize("sample", sorted(p.name for p in SAMPLES.glob("correct_*.py")))
def test_correct_samples_pass_every_check(sample):
    assert failed(judge_in_process("rope", SAMPLES / sample)) == set()


@pytest.mark.parametrize("sample,check,phrase", [
    ("bug_interleaved_pairs.py", "values", "interleaved-pair layout of RoFormer, Meta's LLaMA and GPT-J"),
    ("bug_positions_restart.py", "cache_offset", "positions were restarted at 0"),
    ("bug_freq_over_d.py", "values", "base^(-i/d) over the features"),
    ("bug_sin_cos_swapped.py", "values", "sin and cos were swapped"),
    ("bug_rotate_half_sign.py", "values", "wrong way (by -theta)"),
    ("bug_no_negation.py", "values", "lost its minus sign"),
    ("bug_no_negation.py", "relative_position", "depend only on the position difference"),
    ("bug_float32_table_for_float64.py", "float64", "rotated only to about float32 precision"),  # a symptom: the bank names the table
    ("bug_detached.py", "grad_x", "No gradient of x"),
    ("bug_half_returns_float32.py", "dtype_preserved", "wrong dtype: got float32"),
    ("bug_inplace.py", "input_unchanged", "Modified its input in place: x"),
    ("bug_no_odd_check.py", "odd_d", "Expected ValueError"),
])
def test_wrong_sample_fails_its_check_with_the_named_mistake(sample, check, phrase):
    outcomes = judge_in_process("rope", SAMPLES / sample)
    assert check in failed(outcomes)
    assert phrase in messages(outcomes, check)


def test_conventions_that_are_still_rotations_keep_the_relative_property_and_restart_keeps_values():
    """The property check grades the property only: the GPT-J layout is a valid RoPE and passes it,
    and forgetting the cache offset is invisible at positions 0..L-1."""
    assert "relative_position" not in failed(judge_in_process("rope", SAMPLES / "bug_interleaved_pairs.py"))
    restart = failed(judge_in_process("rope", SAMPLES / "bug_positions_restart.py"))
    assert "values" not in restart and "cache_offset" in restart


def test_float32_table_is_caught_only_where_float64_is_asked():
    outcomes = judge_in_process("rope", SAMPLES / "bug_float32_table_for_float64.py")
    assert failed(outcomes) & {"values", "cache_offset", "half_precision", "relative_position"} == set()
    assert "float32 for a float64 input" not in messages(outcomes, "values")


# -- the NumPy track ------------------------------------------------------------------------------------

NUMPY_SAMPLES = SAMPLES / "numpy"
ref_np = get_exercise("rope", track="numpy").load_reference()


def judge_track(track: str, path, seed: int = 7) -> dict:
    """Outcomes by check id for the module at ``path`` graded in ``track``, judged as the host judges."""
    ex = get_exercise("rope", track=track)
    plan = build_plan(ex, seed)
    expected = run_in_process(plan.wire(), plan.arrays, ex.load_reference())
    gw, ga = plan.golden()
    golden = run_in_process(gw, ga, ex.load_reference())
    got = run_in_process(plan.wire(), plan.arrays, load_submission(str(path), f"rope_{track}_{path.stem}"), str(path))
    outcomes: dict = {}
    for step in plan.steps:
        if step.judge is not None:
            ctx = JudgeContext(step=step, plan=plan, got=got.steps.get(step.id), expected=expected.steps[step.id],
                               golden=golden.steps[step.id], candidate_steps=got.steps,
                               expected_steps=expected.steps, golden_steps=golden.steps)
            outcomes.setdefault(step.check, []).append(step.judge(ctx))
    return outcomes


@pytest.mark.parametrize("dtype,positions", [(np.float64, [0, 5, 4095, 17]), (np.float32, np.array([3, 4, 5, 6], np.int16))])
def test_numpy_reference_equals_complex_multiplication(dtype, positions):
    x = np.random.default_rng(8).standard_normal((2, 4, 8)).astype(dtype)
    got = ref_np.apply_rope(x, positions)
    assert got.dtype == dtype
    tol = 1e-12 if dtype == np.float64 else 2e-6
    np.testing.assert_allclose(got, _complex_oracle(x, positions), rtol=tol, atol=tol)


def test_numpy_float16_is_rotated_at_float32_and_cast_back():
    x = np.random.default_rng(9).standard_normal((3, 16)).astype(np.float16)
    got = ref_np.apply_rope(x, [7, 8, 9])
    want = _complex_oracle(x.astype(np.float64), [7, 8, 9])
    assert got.dtype == np.float16
    assert np.all(np.abs(got.astype(np.float64) - want) <= np.finfo(np.float16).eps * np.abs(want) + 1e-6)


def test_numpy_track_drops_the_gradient_and_bfloat16():
    ex = get_exercise("rope", track="numpy")
    assert "grad_x" not in {c.id for c in ex.checks}
    plan = build_plan(ex, seed=3)
    assert not plan.uses_torch()
    kinds = {a["array"] and plan.arrays[a["array"]].dtype.name for s in plan.wire()["steps"] for a in s["args"]
             if "array" in a}
    assert {"float16", "float32", "float64", "int16", "uint8"} <= kinds


@pytest.mark.parametrize("sample", sorted(p.name for p in NUMPY_SAMPLES.glob("correct_*.py")))
def test_numpy_correct_samples_pass_every_check(sample):
    assert failed(judge_track("numpy", NUMPY_SAMPLES / sample)) == set()


@pytest.mark.parametrize("sample,check,phrase", [
    ("bug_interleaved_pairs.py", "values", "interleaved-pair layout of RoFormer, Meta's LLaMA and GPT-J"),
    ("bug_positions_restart.py", "cache_offset", "positions were restarted at 0"),
    ("bug_freq_over_d.py", "values", "base^(-i/d) over the features"),
    ("bug_sin_cos_swapped.py", "values", "sin and cos were swapped"),
    ("bug_rotate_half_sign.py", "values", "wrong way (by -theta)"),
    ("bug_float32_table_for_float64.py", "float64", "rotated only to about float32 precision"),  # a symptom: the bank names the table
    ("bug_inplace.py", "input_unchanged", "Modified its input in place: x"),
    ("bug_returns_float64.py", "dtype_preserved", "wrong dtype: got float64"),
    ("bug_no_odd_check.py", "odd_d", "Expected ValueError"),
])
def test_numpy_wrong_sample_fails_its_check_with_the_named_mistake(sample, check, phrase):
    outcomes = judge_track("numpy", NUMPY_SAMPLES / sample)
    assert check in failed(outcomes)
    assert phrase in messages(outcomes, check)


def test_an_array_fails_the_torch_track(tmp_path):
    path = tmp_path / "returns_numpy.py"
    path.write_text((SAMPLES / "correct_float64_internal.py").read_text().replace(
        "return (x64 * torch.cos(theta) + x_rot * torch.sin(theta)).to(x.dtype)",
        "return (x64 * torch.cos(theta) + x_rot * torch.sin(theta)).to(x.dtype).detach().numpy()"))
    outcomes = judge_track("torch", path)
    # the kind costs dtype_preserved alone (one mistake, one deduction): the values are right
    assert "values" not in failed(outcomes)
    assert "should be a torch.Tensor (this is the PyTorch track), got a NumPy array" in \
        messages(outcomes, "dtype_preserved")


def test_positions_cast_to_half_precision_are_caught_after_a_long_cache_and_named(tmp_path):
    """Positions cast to x's dtype before the angles (bfloat16 holds integers exactly up to 256,
    float16 up to 2048) scored full marks while every half-precision case stayed below position 109;
    the case at positions 3001..3005 rounds them (3001 -> 3000 in float16, 3008 in bfloat16), and
    replay names the mistake in a style the bank's patch never saw."""
    assert torch.tensor([3001]).to(torch.float16).item() == 3000.0
    assert torch.tensor([3001]).to(torch.bfloat16).item() == 3008.0
    source = (ROOT / "submissions" / "samples" / "rope" / "correct_half_tables_outer.py").read_text()
    old, new = "pos = torch.as_tensor(positions).to(wt)", "pos = torch.as_tensor(positions).to(x.dtype).to(wt)"
    assert source.count(old) == 1
    card = assert_named_as(get_exercise("rope"), source.replace(old, new), "positions_in_half_precision", tmp_path)
    assert {c.id for c in card.checks if c.verdict != "passed"} == {"half_precision"}


@pytest.mark.parametrize("track", ["numpy", "torch"])
def test_positions_types_use_the_top_of_a_small_dtype(track):
    """'Any integer dtype' means its range: positions_types holds uint8 positions past 127, so integer
    arithmetic done in the positions' own dtype (overflowing there) is charged to that check."""
    plan = get_exercise("rope", track=track).checks_module.build_plan(1, 1, track=track)
    tops = []
    for s in (s for s in plan.steps if s.check == "positions_types"):
        arg = s.wire["args"][1]
        name = arg.get("array") or arg.get("tensor")
        if name:
            tops.append((arg.get("dtype") or str(plan.arrays[name].dtype), int(np.max(plan.arrays[name]))))
    assert any(dt == "uint8" and top > 127 for dt, top in tops), tops


def test_position_arithmetic_overflowing_uint8_fails_positions_types_only(tmp_path):
    """A NumPy solution that doubles the positions in their own dtype (uint8 wraps past 127)."""
    path = tmp_path / "uint8_overflow.py"
    path.write_text('''import numpy as np


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    if d % 2:
        raise ValueError("d must be even")
    work = np.float64 if x.dtype == np.float64 else np.float32
    two_pos = np.asarray(positions) * 2
    inv = 1.0 / np.power(work(base), np.arange(0, d, 2).astype(work) / work(d))
    theta = (two_pos.astype(work) / 2)[:, None] * inv
    emb = np.concatenate([theta, theta], -1)
    xw = x.astype(work)
    rot = np.concatenate([-xw[..., d // 2:], xw[..., : d // 2]], -1)
    return (xw * np.cos(emb) + rot * np.sin(emb)).astype(x.dtype)
''', encoding="utf-8")
    assert failed(judge_in_process("rope", path, track="numpy")) == {"positions_types"}


@pytest.mark.parametrize("track", ["torch", "numpy"])
def test_half_precision_is_judged_at_float32_internals_and_float16_internals_fails_it_alone(track, tmp_path):
    """The contract rotates float16/bfloat16 at float32: the half-precision tolerance comes from
    float32 internals (the Hugging Face style baseline rotated in half precision and widened it), and
    a rotation computed in half precision (angles included) fails `half_precision` and nothing else."""
    from grader.grading.grade import _MEASURE_LOCK, answers_for, grade_submission  # noqa: PLC0415
    from grader.grading.trusted import TrustedInProcess  # noqa: PLC0415
    from grader.judge.judges import dtype_name, output_array, output_descriptor  # noqa: PLC0415
    from grader.judge.tolerance import tolerance_for  # noqa: PLC0415
    from mutant_helpers import mutant_file  # noqa: PLC0415

    ex = get_exercise("rope", track=track)
    plan = build_plan(ex, 3)
    expected, golden, baselines, _ = answers_for(ex, 3, plan)
    half = [s for s in plan.steps if s.check == "half_precision" and s.judge is not None]
    assert half and ex.baseline_paths
    for step in half:
        exp, gold = output_array(expected.steps[step.id]), output_array(golden.steps[step.id])
        # golden is the complex-multiplication oracle; the reference's half answer is it rounded once
        ctx = JudgeContext(step=step, plan=plan, got=None, expected=expected.steps[step.id], golden=golden.steps[step.id])
        x, pos = np.asarray(ctx.arg(0), np.float64), np.asarray(ctx.arg(1))
        np.testing.assert_allclose(gold, _complex_oracle(x, pos), rtol=1e-12, atol=1e-12)
        own = tolerance_for(dtype_name(output_descriptor(expected.steps[step.id])), [exp], gold)
        widened = tolerance_for(own.dtype, [exp] + [output_array(b.steps[step.id]) for b in baselines], gold)
        assert widened.atol == pytest.approx(own.atol, rel=1e-9)   # the baseline rotates at float32 too
    path = mutant_file("rope", "float16_internals", tmp_path, track=track)
    card = grade_submission(ex, path, seed=3, trusted_runner=TrustedInProcess(path.name, _MEASURE_LOCK))
    assert {c.id for c in card.checks if c.verdict != "passed"} == {"half_precision"}
    assert {c.details.get("mistake") for c in card.checks if c.details.get("mistake")} == {"float16_internals"}


def test_in_place_rotation_under_no_grad_is_named_with_its_cut_gradient(tmp_path):
    """x rotated in place under torch.no_grad() and a copy of x returned: the input changes and the
    gradient reaching x is the identity. Written into the outer-product style it is named
    rotated_in_place_gradient_cut, not rotated_in_place (whose output keeps the rotation's gradient)."""
    source = (ROOT / "submissions" / "samples" / "rope" / "correct_half_tables_outer.py").read_text()
    old = "    return torch.cat((x1 * c - x2 * s, x2 * c + x1 * s), dim=-1).to(x.dtype)\n"
    assert old in source
    source = source.replace(old, "    with torch.no_grad():\n"
                                 "        x.copy_(torch.cat((x1 * c - x2 * s, x2 * c + x1 * s), dim=-1))\n"
                                 "    return x.clone()\n")
    card = assert_named_as(get_exercise("rope", track="torch"), source, "rotated_in_place_gradient_cut", tmp_path)
    assert {c.id for c in card.checks if c.verdict != "passed"} == {"input_unchanged", "grad_x"}
