"""Where the tolerance is decided: dtype-aware and scale-aware, never one global ``1e-5``.

The rule (DESIGN.md, "Tolerances"): compare the candidate with a float64 *golden* answer. The
allowed absolute error for a case in dtype T is the larger of

* the floor for T, PyTorch's ``assert_close`` defaults (``torch.testing._comparison``,
  with float64 tightened to rtol 1e-9 / atol 1e-11 (see ``FLOORS``), float32 rtol 1.3e-6 / atol 1e-5, float16 rtol 1e-3 / atol 1e-5,
  bfloat16 rtol 1.6e-2 / atol 1e-5), and
* ``factor`` times the greatest error that our plain reference, run step by step in T, makes
  against golden on the same case (FlashAttention's tests allow 2x the error of a plain fp16 PyTorch
  implementation; PyTorch's SDPA tests allow ``max(1e-5, 5x)`` of a same-dtype reference's error).

so a correct solution written another way (a different reduction order, a loop instead of a
matmul) passes, while a wrong formula, whose error is orders of magnitude larger, does not.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: (rtol, atol) floors by dtype name, from ``torch.testing._comparison.default_tolerances``.
FLOORS: dict[str, tuple[float, float]] = {
    # float64 is tighter than assert_close's 1e-7: at 1e-7 a solution that silently computes in
    # float32 (error ~6e-8) passed every float64 case. Correct float64 code, whatever its reduction
    # order or formulation (log-sum-exp at logits ~1e5 included), stays below ~1e-11.
    "float64": (1e-9, 1e-11),
    "float32": (1.3e-6, 1e-5),
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
}
#: How many times the plain same-dtype reference's error a candidate may make.
DEFAULT_FACTOR = 5.0


@dataclass(frozen=True)
class Tolerance:
    """Allowed deviation from golden: ``|got - golden| <= atol + rtol * |golden|`` elementwise.

    Attributes:
        rtol: relative tolerance (dimensionless).
        atol: absolute tolerance (same unit as the values).
        dtype: the dtype the case was computed in.
        baseline_error: greatest |reference_in_dtype - golden| on this case.
        factor: multiple of ``baseline_error`` allowed.
    """

    rtol: float
    atol: float
    dtype: str
    baseline_error: float = 0.0
    factor: float = DEFAULT_FACTOR

    def to_json(self) -> dict:
        """The numbers, for the scorecard's ``details``."""
        return {"rtol": self.rtol, "atol": self.atol, "dtype": self.dtype,
                "baseline_error": self.baseline_error, "factor": self.factor}


def floor_for(dtype_name: str) -> tuple[float, float]:
    """``(rtol, atol)`` floor for a dtype name; integer and bool dtypes compare exactly.

    Raises:
        ValueError: an unknown floating dtype.
    """
    if dtype_name in FLOORS:
        return FLOORS[dtype_name]
    kind = np.dtype(dtype_name).kind
    if kind in "biu":
        return (0.0, 0.0)
    raise ValueError(f"no tolerance floor for dtype {dtype_name}")


def tolerance_for(dtype_name: str, expected: np.ndarray | list[np.ndarray | None] | None,
                  golden: np.ndarray, factor: float = DEFAULT_FACTOR) -> Tolerance:
    """Tolerance for one case computed in ``dtype_name``.

    Args:
        dtype_name: the case's dtype (``"float32"``, ``"bfloat16"``, ...).
        expected: our reference's output computed in that dtype, or a list of outputs of several
            plain correct implementations (the reference and an exercise's ``baselines/``) computed
            in that dtype; the largest error among them sets the baseline. None when only golden exists.
        golden: the reference's output computed in float64 from the same (rounded) inputs.
        factor: multiple of the plain implementations' error allowed.

    Returns:
        A ``Tolerance`` whose ``atol`` is ``max(floor_atol, factor * baseline_error)``.
    """
    rtol, atol = floor_for(dtype_name)
    baseline = 0.0
    candidates = expected if isinstance(expected, list) else [expected]
    g = golden.astype(np.float64)
    for e in candidates:
        if e is None or e.shape != golden.shape or not golden.size:
            continue
        e = e.astype(np.float64)
        finite = np.isfinite(e) & np.isfinite(g)
        if finite.any():
            baseline = max(baseline, float(np.max(np.abs(e[finite] - g[finite]))))
    return Tolerance(rtol=rtol, atol=max(atol, factor * baseline), dtype=dtype_name,
                     baseline_error=baseline, factor=factor)
