"""Cross-check of counted probe figures with the CPU time the host observed (tamper evidence).

Counts (FLOPs) are made inside the submission's own process, which can patch the instruments or
forge frames. The host separately observes the sandbox's CPU seconds per measured step
(``grader.sandbox.observe``). Genuine work can only make observed time grow *slower* than the count
at these sizes (fixed Python and interpreter overhead flattens it), so time growing much faster
than the counted work, at a size where time is large enough to measure, means work was done that the
counts do not show. The flag is evidence for the interviewer, not proof: it never changes a verdict.

Thresholds (chosen so that correct code cannot trip them: it never reaches ``MEASURABLE_S`` at the
probe sizes of the bank, and where it does, overhead keeps its time slope below its count slope):

* ``MEASURABLE_S``: observed CPU time at the largest size must be at least 50 ms (process-backend
  clock ticks are 10 ms);
* ``POINT_S``: only sizes whose observed time is at least 20 ms (two clock ticks) enter the fit, and
  at least two must: below that, tick quantisation (a step read as 0 or 10 ms) would dominate;
* ``SLOPE_MARGIN``: the log-log slope of observed time against size (least squares over those sizes)
  must exceed the slope of the counted work over the same sizes by more than 1.5 (more than an extra
  factor of the size: a 2x slowdown of one point under machine load moves a two-point slope by 1.0
  at most when sizes double).
"""

from __future__ import annotations

import math

import numpy as np

#: Observed CPU seconds at the largest size below which no flag is raised (seconds).
MEASURABLE_S = 0.05
#: Smallest observed CPU time of a size that enters the slope fit (seconds).
POINT_S = 0.02
#: How much steeper (log-log slope) observed time must grow than the counted work to flag.
SLOPE_MARGIN = 1.5


def _slope(sizes: list[float], values: list[float]) -> float:
    x = np.log(np.asarray(sizes, dtype=np.float64))
    y = np.log(np.maximum(np.asarray(values, dtype=np.float64), 1e-6))
    return float(np.polyfit(x, y, 1)[0])


def tamper_flag(sweep: str, sizes: list[int], observed: list[float | None], counted: list[float],
                what: str = "counted work") -> dict | None:
    """Compare the growth of observed CPU time with the growth of a counted quantity.

    Args:
        sweep: name of the swept size (``seq_len``), for the message.
        sizes: swept sizes, increasing (at least 2).
        observed: host-observed CPU seconds of the candidate at each size (None: not observed).
        counted: the candidate's counted quantity at each size (FLOPs), as the sandbox reported it.
        what: the counted quantity's name, for the message.

    Returns:
        None when nothing was observed, time is too small to measure (under ``MEASURABLE_S`` at the
        largest size, or fewer than two sizes at ``POINT_S`` or more), or growth agrees; else
        ``{"message": str, "observed_slope": float, "counted_slope": float, "observed_cpu_seconds":
        list[float], "margin": SLOPE_MARGIN, "measurable_s": MEASURABLE_S, "fitted_sizes": list[int]}``.
    """
    if len(sizes) < 2 or any(v is None for v in observed) or len(observed) != len(sizes):
        return None
    if not all(c > 0 and math.isfinite(c) for c in counted) or not all(math.isfinite(v) for v in observed):
        return None
    if observed[-1] < MEASURABLE_S:
        return None
    keep = [i for i, v in enumerate(observed) if v >= POINT_S]
    if len(keep) < 2:
        return None
    observed_slope = _slope([sizes[i] for i in keep], [observed[i] for i in keep])
    counted_slope = _slope([sizes[i] for i in keep], [counted[i] for i in keep])
    if observed_slope <= counted_slope + SLOPE_MARGIN:
        return None
    return {
        "message": (f"observed CPU time grows like {sweep}^{observed_slope:.1f} while the {what} grows like "
                    f"{sweep}^{counted_slope:.1f} ({observed[-1] * 1e3:.0f} ms at {sweep}={sizes[-1]}): "
                    "the counts may have been tampered with"),
        "observed_slope": observed_slope, "counted_slope": counted_slope,
        "observed_cpu_seconds": [float(v) for v in observed], "margin": SLOPE_MARGIN, "measurable_s": MEASURABLE_S,
        "fitted_sizes": [sizes[i] for i in keep],
    }
