"""Cross-check of counted probe figures with what the host observed (tamper evidence).

Two cross-checks, each on a probe's sweep: counted FLOPs against observed CPU time
(``tamper_flag``), and counted peak bytes against the observed peak memory (``memory_tamper_flag``).

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
* ``POINT_S``: only sizes whose observed time is at least 50 ms (five clock ticks) enter the fit,
  and at least two must: below that, tick quantisation would dominate (at 20 ms, one tick either
  way moves a two-point slope over a doubling of the size by up to 0.6, a third of the margin);
* ``SLOPE_MARGIN``: the log-log slope of observed time against size (least squares over those sizes)
  must exceed the slope of the counted work over the same sizes by more than 1.5 (more than an extra
  factor of the size: a 2x slowdown of one point under machine load moves a two-point slope by 1.0
  at most when sizes double).

Peak memory (``memory_tamper_flag``) is compared in bytes, not only in growth: the host observes the
sandbox's resident memory (``grader.sandbox.observe``), which for genuine code holds the counted peak
(``tracemalloc``, or torch's live storage) plus the step's inputs, the runner's copy of them and its
encoding of the output: all no larger than the output and inputs the reference also holds, so within
a few times the counted peak. Memory that grows past ``MEM_RATIO`` times the count at the two largest
sizes was used by something the counts do not show. Thresholds:

* ``MEM_MEASURABLE_BYTES``: the observed peak at the largest size must be at least 16 MiB (the
  resident set moves in pages, the heap keeps freed memory, and cgroup v1 charges in batches);
* ``MEM_POINT_BYTES``: the second-largest size must show at least 1 MiB too;
* ``MEM_RATIO``: at both sizes the observed peak must exceed 8 times the counted peak. Two sizes,
  because a one-off (a library's buffer first touched at one size) is resident afterwards and is
  seen at one size only; a missed observation (a temporary freed before the host's reset) only
  lowers the observed figure, so it can hide a forger but never flags a genuine solution.

The host reads memory at exact frame boundaries, with the runner blocked at each (the frame
handshake, ``grader.sandbox.observe``), so where the memory source is readable every measured step
is observed. A step the host could read memory for but did not see (``observed_peak_missed``) means
the runner did not wait for the host: a submission patched it (or exited early). That gains it
nothing: ``memory_unobserved_flag`` puts a note for the interviewer on the probe when either of its
two largest sizes was missed that way, instead of passing it silently.
"""

from __future__ import annotations

import math

import numpy as np
from grader.run.runner import ACK_TIMEOUT_S

#: Observed CPU seconds at the largest size below which no flag is raised (seconds).
MEASURABLE_S = 0.05
#: Smallest observed CPU time of a size that enters the slope fit (seconds).
POINT_S = 0.05
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



#: Observed peak bytes at the largest size below which no memory flag is raised.
MEM_MEASURABLE_BYTES = 16 * 2 ** 20
#: Observed peak bytes the second-largest size must reach as well.
MEM_POINT_BYTES = 2 ** 20
#: How many times the counted peak the observed peak must exceed at the two largest sizes to flag.
MEM_RATIO = 8.0


def _fmt_bytes(value: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if value >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value:.0f} B"


def memory_tamper_flag(sweep: str, sizes: list[int], observed: list[float | None], counted: list[float],
                       what: str = "counted peak memory") -> dict | None:
    """Compare the host-observed peak memory of a probe's sweep with its counted peak bytes.

    Args:
        sweep: name of the swept size (``seq_len``), for the message.
        sizes: swept sizes, increasing (at least 2).
        observed: host-observed peak bytes of the candidate at each size, above its usage when the
            step began (None: not observed; see ``grader.sandbox.observe``).
        counted: the candidate's counted peak bytes at each size, as the sandbox reported it.
        what: the counted quantity's name, for the message.

    Returns:
        None when either of the two largest sizes was not observed, the observed peak is too small to
        judge (under ``MEM_MEASURABLE_BYTES`` at the largest size or ``MEM_POINT_BYTES`` at the one
        before), or it is within ``MEM_RATIO`` times the count at either of them; else
        ``{"message": str, "observed_peak_bytes": list, "counted_peak_bytes": list, "ratios":
        [ratio at the second-largest size, at the largest], "observed_slope": float, "counted_slope":
        float, "ratio_threshold": MEM_RATIO, "measurable_bytes": MEM_MEASURABLE_BYTES}``. The slopes are
        log-log fits over the two largest sizes (how each grows), for the interviewer.
    """
    if len(sizes) < 2 or len(observed) != len(sizes) or len(counted) != len(sizes):
        return None
    last = [observed[-2], observed[-1]]
    if any(v is None or not math.isfinite(v) for v in last) or not all(math.isfinite(c) for c in counted[-2:]):
        return None
    if last[1] < MEM_MEASURABLE_BYTES or last[0] < MEM_POINT_BYTES:
        return None
    ratios = [o / max(float(c), 1.0) for o, c in zip(last, counted[-2:])]
    if min(ratios) <= MEM_RATIO:
        return None
    pair = [sizes[-2], sizes[-1]]
    observed_slope = _slope(pair, last)
    counted_slope = _slope(pair, [max(float(c), 1.0) for c in counted[-2:]])
    return {
        "message": (f"the sandbox's peak memory at {sweep}={sizes[-1]} was {_fmt_bytes(last[1])}, "
                    f"{ratios[1]:.0f}x the {what} of {_fmt_bytes(counted[-1])} ({ratios[0]:.0f}x at "
                    f"{sweep}={sizes[-2]}; observed grows like {sweep}^{observed_slope:.1f}, counted like "
                    f"{sweep}^{counted_slope:.1f}): memory was used that the counts do not show, "
                    "so the counts may have been tampered with"),
        "observed_peak_bytes": [None if v is None else float(v) for v in observed],
        "counted_peak_bytes": [float(c) for c in counted], "ratios": ratios,
        "observed_slope": observed_slope, "counted_slope": counted_slope, "ratio_threshold": MEM_RATIO,
        "measurable_bytes": MEM_MEASURABLE_BYTES,
    }


def memory_unobserved_flag(sweep: str, sizes: list[int], observed: list[float | None],
                           missed: list[bool]) -> dict | None:
    """An interviewer note for a probe whose two largest sizes the host could not observe although
    it could read the sandbox's memory: the runner did not hold the frame handshake there.

    Args:
        sweep: name of the swept size (``seq_len``), for the message.
        sizes: swept sizes, increasing (at least 2).
        observed: host-observed peak bytes at each size (None: not observed).
        missed: at each size, whether a measured step was missed while the memory source was readable
            (``StepResult.observed_peak_missed``).

    Returns:
        None when both of the two largest sizes were observed, or a missing one was not missed (no
        source: nothing to judge); else ``{"message": str, "unobserved_sizes": list[int],
        "observed_peak_bytes": list}``.
    """
    if len(sizes) < 2 or len(observed) != len(sizes) or len(missed) != len(sizes):
        return None
    unseen = [sizes[i] for i in (-2, -1) if observed[i] is None and missed[i]]
    if not unseen:
        return None
    where = " and ".join(f"{sweep}={size}" for size in unseen)
    return {
        "message": (f"the host could not observe the sandbox's peak memory at {where}: the sandbox did not "
                    "wait for the host at the step's frame boundaries (the grader's runner always does, "
                    f"unless the host leaves an acknowledgement unanswered for {ACK_TIMEOUT_S:g} s), so the counted peak "
                    "memory could not be cross-checked and the runner may have been tampered with; no "
                    "points depend on this note"),
        "unobserved_sizes": unseen,
        "observed_peak_bytes": [None if v is None else float(v) for v in observed],
    }
