"""Compare a candidate's array with the golden answer, in the manner of ``torch.testing``.

Structure before values (shape, then numbers), one pure function building the message, ``rtol``
and ``atol`` always reported together, relative difference divided by the expected value
(``torch/testing/_comparison.py``). NaN never equals anything here: a NaN where the answer is a
number is a mismatch, and matching infinities of the same sign are equal.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from grader.judge.tolerance import Tolerance


@dataclass(frozen=True)
class Comparison:
    """Result of one comparison.

    Attributes:
        ok: every element is within tolerance (and the shape matches).
        message: a sentence for the candidate ("" when ok).
        details: numbers for the scorecard: mismatches, greatest differences and where, tolerance.
    """

    ok: bool
    message: str = ""
    details: dict = field(default_factory=dict)


def _fmt(x: float) -> str:
    return f"{x:.3g}"


def _fmt_value(x: float) -> str:
    """Enough digits to show a difference at float64 precision."""
    return f"{x:.10g}"


#: The start of the line a comparison adds when every value is the right answer rounded to float32.
ROUNDED_TO_FLOAT32 = "Every value is the expected value rounded to float32"


def shape_message(name: str, got: tuple, expected: tuple) -> str:
    """``'output' has the wrong shape: got (2, 4, 8), expected (2, 8, 4)``."""
    return f"'{name}' has the wrong shape: got {tuple(got)}, expected {tuple(expected)}"


def compare_arrays(name: str, got: np.ndarray, golden: np.ndarray, tol: Tolerance) -> Comparison:
    """Compare ``got`` with ``golden`` elementwise: ``|got - golden| <= atol + rtol * |golden|``.

    Args:
        name: what the array is, for messages (``"output"``, ``"weights"``, ``"grad of W_q"``).
        got: the candidate's array (any numeric dtype; compared in float64).
        golden: the float64 answer.
        tol: the tolerance for this case.

    Returns:
        A ``Comparison``; its message reads like ``torch.testing.assert_close``'s.
    """
    if tuple(got.shape) != tuple(golden.shape):
        return Comparison(False, shape_message(name, got.shape, golden.shape),
                          {"got_shape": list(got.shape), "expected_shape": list(golden.shape)})
    if got.dtype.kind not in "biuf" and golden.dtype.kind in "biuf":
        # casting complex to float would drop the imaginary part: a complex result is never "close"
        return Comparison(False, f"'{name}' has the wrong kind of values: got dtype {got.dtype}, "
                          f"expected real numbers ({golden.dtype})", {"got_dtype": str(got.dtype)})
    g = got.astype(np.float64, copy=False)
    e = golden.astype(np.float64, copy=False)
    same_inf, abs_diff, bad = _differences(g, e, tol)
    details = {"tolerance": tol.to_json(), "numel": int(e.size)}
    if e.size:
        details["max_abs_diff"] = float(np.max(abs_diff))
    if not bad.any():
        return Comparison(True, "", details)

    n_bad = int(bad.sum())
    nan_count = int(np.isnan(g).sum())
    idx_abs = np.unravel_index(int(np.argmax(abs_diff)), abs_diff.shape)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        rel = np.where(same_inf | (abs_diff == 0), 0.0, abs_diff / np.abs(e))
    rel = np.where(np.isnan(rel), np.inf, rel)
    idx_rel = np.unravel_index(int(np.argmax(rel)), rel.shape)
    where_abs = tuple(int(i) for i in idx_abs)
    where_rel = tuple(int(i) for i in idx_rel)
    lines = [f"'{name}' is not close to the expected values.",
             f"Mismatched elements: {n_bad} / {e.size} ({100.0 * n_bad / e.size:.1f}%)"]
    if nan_count:
        lines.append(f"NaN elements in the result: {nan_count} (the expected values have none there)")
    lines.append(f"Greatest absolute difference: {_fmt(float(abs_diff[idx_abs]))} at index {where_abs} "
                 f"(got {_fmt_value(float(g[idx_abs]))}, expected {_fmt_value(float(e[idx_abs]))}; "
                 f"up to {_fmt(tol.atol)} allowed)")
    lines.append(f"Greatest relative difference: {_fmt(float(rel[idx_rel]))} at index {where_rel} "
                 f"(up to {_fmt(tol.rtol)} allowed)")
    if got.dtype == np.float64 and golden.dtype == np.float64 and nan_count == 0 and rounded_to_float32(g, e):
        # a symptom with its proof (every value checked), not a cause: a float32 output buffer, a cast
        # down and back at the end, or a float32 ``out=`` all leave it
        lines.append(f"{ROUNDED_TO_FLOAT32}: the result carries float32 precision, not float64's")
    details.update({
        "mismatched": n_bad, "nan_count": nan_count,
        "max_abs_diff": float(abs_diff[idx_abs]) if np.isfinite(abs_diff[idx_abs]) else None,
        "max_abs_diff_index": list(where_abs),
        "max_rel_diff": float(rel[idx_rel]) if np.isfinite(rel[idx_rel]) else None,
        "max_rel_diff_index": list(where_rel),
    })
    return Comparison(False, "\n".join(lines), details)


def _differences(g: np.ndarray, e: np.ndarray, tol: Tolerance) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(same_inf, abs_diff, bad)`` of float64 ``g`` against float64 ``e``: infinities of the same sign
    agree, NaN is infinitely far, and an element is bad beyond ``atol + rtol * |e|``."""
    with np.errstate(invalid="ignore", over="ignore"):
        same_inf = np.isinf(g) & np.isinf(e) & (np.sign(g) == np.sign(e))
        abs_diff = np.where(same_inf, 0.0, np.abs(g - e))
        abs_diff = np.where(np.isnan(abs_diff), np.inf, abs_diff)
        allowed = tol.atol + tol.rtol * np.where(np.isfinite(e), np.abs(e), 0.0)
        bad = abs_diff > allowed
    return same_inf, abs_diff, bad


def rounded_to_float32(x: np.ndarray, golden: np.ndarray) -> bool:
    """Whether every finite value of ``x`` (float64) is within one float32 spacing of ``golden`` (the
    float64 answer, same shape) rounded to float32, and at least one finite value exists: the trace of a
    right result rounded to float32 once, at the end. A computation that ran in float32 rounds at every
    step and strays further somewhere (several float32 steps on the sums of a product or a softmax); one
    step of slack covers a golden value on a float32 rounding boundary, which a float64 computation a
    few float64 steps away rounds the other way."""
    finite = np.isfinite(x) & np.isfinite(golden)
    if not finite.any() or not np.array_equal(np.isfinite(x), np.isfinite(golden)):
        return False
    with np.errstate(over="ignore"):
        r = golden[finite].astype(np.float32)
    if not np.all(np.isfinite(r)):
        return False
    step = np.spacing(np.abs(r)).astype(np.float64)
    return bool(np.all(np.abs(x[finite] - r.astype(np.float64)) <= step))


def close_enough(got: np.ndarray, target: np.ndarray, tol: Tolerance) -> bool:
    """``compare_arrays(...).ok`` without the message: diagnoses compare a candidate with every mutant
    of the bank, most of them far off, and only need the verdict.

    Args:
        got, target: arrays of any numeric dtype (compared in float64); target is the answer.
        tol: the tolerance, as for ``compare_arrays``.
    """
    if tuple(got.shape) != tuple(target.shape):
        return False
    if got.dtype.kind not in "biuf" and target.dtype.kind in "biuf":
        return False
    return not _differences(got.astype(np.float64, copy=False), target.astype(np.float64, copy=False), tol)[2].any()
