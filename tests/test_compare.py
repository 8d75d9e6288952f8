import numpy as np

from grader.judge.compare import compare_arrays
from grader.judge.judges import JudgeContext, close
from grader.judge.tolerance import Tolerance, tolerance_for
from grader.run.channel import StepResult
from grader.run.plan import Plan, Step


def tol32():
    return Tolerance(rtol=1.3e-6, atol=1e-5, dtype="float32")


def test_equal_arrays_pass():
    x = np.linspace(0, 1, 12).reshape(3, 4)
    assert compare_arrays("out", x.astype(np.float32), x, tol32()).ok


def test_shape_mismatch_message_names_both_shapes():
    cmp = compare_arrays("output", np.zeros((2, 8, 4)), np.zeros((2, 4, 8)), tol32())
    assert not cmp.ok
    assert cmp.message == "'output' has the wrong shape: got (2, 8, 4), expected (2, 4, 8)"


def test_mismatch_report_counts_and_locates_the_worst_element():
    golden = np.ones((2, 5))
    got = golden.copy()
    got[1, 3] = 1.5
    got[0, 0] = 1.0 + 2e-5
    cmp = compare_arrays("weights", got, golden, tol32())
    assert not cmp.ok
    assert "Mismatched elements: 2 / 10 (20.0%)" in cmp.message
    assert "Greatest absolute difference: 0.5 at index (1, 3)" in cmp.message
    assert cmp.details["max_abs_diff_index"] == [1, 3]
    assert cmp.details["mismatched"] == 2


def test_nan_never_matches_a_number_but_equal_infinities_do():
    golden = np.array([0.0, np.inf, -np.inf, 1.0])
    assert compare_arrays("x", golden.copy(), golden, tol32()).ok
    got = golden.copy()
    got[0] = np.nan
    cmp = compare_arrays("x", got, golden, tol32())
    assert not cmp.ok and cmp.details["nan_count"] == 1
    got = golden.copy()
    got[1] = -np.inf
    assert not compare_arrays("x", got, golden, tol32()).ok


def test_relative_tolerance_scales_with_magnitude():
    golden = np.array([1e6])
    assert compare_arrays("x", golden * (1 + 1e-6), golden, tol32()).ok
    assert not compare_arrays("x", golden * (1 + 1e-5), golden, tol32()).ok


def test_tolerance_floor_and_baseline_widening():
    golden = np.zeros(4)
    floor = tolerance_for("float32", golden.copy(), golden)
    assert (floor.rtol, floor.atol) == (1.3e-6, 1e-5)
    noisy = golden + np.array([0, 1e-3, 0, 0])
    wide = tolerance_for("float16", [golden, noisy], golden)
    assert wide.baseline_error == 1e-3
    assert wide.atol == 5e-3  # 5x the worst plain implementation's error
    assert tolerance_for("float64", None, golden).atol == 1e-11


def _softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _result(arr):
    return StepResult(report={"ok": True, "output": {"kind": "array", "key": "o", "dtype": arr.dtype.name,
                                                     "shape": list(arr.shape)}}, arrays={"o": arr})


def test_a_float64_case_given_float32_answers_is_judged_at_float32_tolerance():
    """One mistake, one deduction: outside the float64 check, a float64 case is judged at the tolerance
    of the reference computing it in float32 (``JudgeContext.float32``): float32 precision passes there,
    a wrong answer still fails; without float32 answers (the float64 check) float32 precision fails."""
    x = np.random.default_rng(0).standard_normal((6, 9)) * 3.0
    golden = _softmax(x)                                         # float64
    low = _softmax(x.astype(np.float32))                         # the reference in float32
    in_float32 = low.astype(np.float64)                          # a candidate computing in float32, cast back
    assert np.abs(in_float32 - golden).max() > 1e-9             # beyond float64's floor
    step = Step(id="s", check="values", wire={"args": []})
    ctx = lambda got, f32: JudgeContext(step=step, plan=Plan(), got=_result(got), expected=_result(golden),  # noqa: E731
                                        golden=_result(golden), float32=f32)
    judge = close()
    assert judge(ctx(in_float32, _result(low))).verdict == "passed"
    assert judge(ctx(in_float32, None)).verdict == "failed"
    wrong = _softmax(x / 2.0)                                    # a wrong scale: far beyond float32 rounding
    assert judge(ctx(wrong, _result(low))).verdict == "failed"
    tol = ctx(in_float32, _result(low)).tolerance({"kind": "array", "dtype": "float64"}, [golden], golden,
                                                 float32_array=lambda r: r.arrays["o"])
    assert tol.dtype == "float32" and (tol.rtol, tol.atol) == (1.3e-6, max(1e-5, 5 * np.abs(low - golden).max()))
