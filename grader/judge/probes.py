"""Complexity probes, host side: declare a sweep, and judge how the candidate's cost grows.

A probe (``[[probes]]`` in ``exercise.toml``) names a complexity check, the quantity measured
(``flops``, ``peak_bytes`` or ``seconds``), the swept size and its values (at least 4), and bounds
relative to the reference measured on the same sizes in the same grading run:

* ``max_ratio``: candidate / reference at every size;
* ``max_ratio_slope``: the fitted log-log slope of that ratio against size, i.e. how much faster
  than the reference the candidate's cost may grow (0 = same growth; 1 = an extra factor of the size).

Counts (FLOPs, bytes) are deterministic, so verdicts based on them cannot flip under machine load.
Time is used only when counting was impossible (the NumPy trail was lost), with margins widened by
``TIME_MARGIN``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from grader.judge.judges import GraderBug, JudgeContext, Outcome, failure_from_exception
from grader.judge.verdicts import Verdict

QUANTITIES = ("flops", "peak_bytes", "seconds")
#: Timing fallback: ratio bound multiplied, slope bound added.
TIME_MARGIN = (5.0, 0.5)
WHAT = {"flops": "Work", "peak_bytes": "Peak memory", "seconds": "Time"}


@dataclass(frozen=True)
class ProbeSpec:
    """One declared probe.

    Attributes:
        check: id of the complexity check it decides.
        quantity: ``flops``, ``peak_bytes`` or ``seconds``.
        sweep: name of the swept size (``seq_len``, ``T``, ``n``), for messages.
        sizes: the swept values, increasing.
        max_ratio: largest allowed candidate/reference ratio at any size.
        max_ratio_slope: largest allowed log-log slope of the ratio against size.
        repeat: timing repeats (minimum kept).
        hint: sentence naming the likely mistake when the growth bound fails.
    """

    check: str
    quantity: str
    sweep: str
    sizes: tuple[int, ...]
    max_ratio: float
    max_ratio_slope: float
    repeat: int = 3
    hint: str = ""

    @classmethod
    def from_toml(cls, doc: dict) -> "ProbeSpec":
        """Build from one ``[[probes]]`` table (already schema-validated)."""
        return cls(check=doc["check"], quantity=doc["quantity"], sweep=doc["sweep"],
                   sizes=tuple(int(s) for s in doc["sizes"]), max_ratio=float(doc["max_ratio"]),
                   max_ratio_slope=float(doc["max_ratio_slope"]), repeat=int(doc.get("repeat", 3)),
                   hint=doc.get("hint", ""))

    def measure(self) -> dict:
        """The runner's ``measure`` request for a probe step (seconds always, for the fallback)."""
        quantities = sorted({self.quantity, "seconds"})
        return {"quantities": quantities, "repeat": self.repeat}


def fit_slope(sizes: list[float], values: list[float]) -> float:
    """Least-squares slope of ``log(values)`` against ``log(sizes)`` (values floored at 1e-30)."""
    x = np.log(np.asarray(sizes, dtype=np.float64))
    y = np.log(np.maximum(np.asarray(values, dtype=np.float64), 1e-30))
    return float(np.polyfit(x, y, 1)[0])


def _fmt(value: float, quantity: str) -> str:
    if quantity == "peak_bytes":
        for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
            if value >= scale:
                return f"{value / scale:.3g} {unit}"
        return f"{value:.0f} B"
    if quantity == "seconds":
        return f"{value * 1e3:.3g} ms"
    return f"{value:.3g} FLOPs"


def judge_series(spec: ProbeSpec, sizes: list[int], candidate: list[float], reference: list[float],
                 quantity: str | None = None) -> Outcome:
    """Judge one measured series against the reference's.

    Args:
        spec: the probe.
        sizes: swept sizes (increasing).
        candidate / reference: the measured quantity at each size.
        quantity: what was actually measured (``seconds`` when falling back from counts).

    Returns:
        PASSED, or FAILED with a message giving the worst size, both values, the ratio and the
        fitted exponents; ``details`` carry sizes, both series, ratios and slopes.
    """
    quantity = quantity or spec.quantity
    fallback = quantity == "seconds" and spec.quantity != "seconds"
    max_ratio = spec.max_ratio * (TIME_MARGIN[0] if fallback else 1.0)
    max_slope = spec.max_ratio_slope + (TIME_MARGIN[1] if fallback else 0.0)
    floor = 1e-9 if quantity == "seconds" else 1.0
    ratios = [c / max(r, floor) for c, r in zip(candidate, reference)]
    ratio_slope = fit_slope(sizes, [max(r, 1e-30) for r in ratios])
    details = {
        "probe": spec.check, "quantity": quantity, "sweep": spec.sweep, "sizes": list(sizes),
        "candidate": list(candidate), "reference": list(reference), "ratios": ratios,
        "candidate_slope": fit_slope(sizes, candidate), "reference_slope": fit_slope(sizes, reference),
        "ratio_slope": ratio_slope, "max_ratio": max_ratio, "max_ratio_slope": max_slope,
        "timing_fallback": fallback,
    }
    worst = int(np.argmax(ratios))
    growth = (f"cost grows as {spec.sweep}^{details['candidate_slope']:.2f} vs the reference's "
              f"{spec.sweep}^{details['reference_slope']:.2f}")
    where = (f"at {spec.sweep}={sizes[worst]} it took {_fmt(candidate[worst], quantity)}, "
             f"{ratios[worst]:.3g}x the reference's {_fmt(reference[worst], quantity)}")
    note = (" (measured by time because the inputs were converted away from the counting arrays; "
            "margins widened)" if fallback else "")
    if ratio_slope > max_slope:
        message = (f"{WHAT[quantity]} grows faster than the reference's: "
                   f"{growth}; {where}{note}.")
        if spec.hint:
            message = f"Likely mistake: {spec.hint}\n{message}"
        return Outcome(Verdict.FAILED, message, details)
    if ratios[worst] > max_ratio:
        message = f"Costs too much compared with the reference: {where} (allowed {max_ratio:g}x){note}."
        if spec.hint:
            message = f"Likely mistake: {spec.hint}\n{message}"
        return Outcome(Verdict.FAILED, message, details)
    return Outcome(Verdict.PASSED, "", details)


def _series(ctx: JudgeContext, results: dict, steps: list, quantity: str) -> tuple[list[float], bool]:
    """Sum ``quantity`` over the measured steps of each size; report whether any trail was lost."""
    values, lost = [], False
    for group in steps:
        total = 0.0
        for step in group:
            m = (results.get(step.id).report.get("measure") or {}) if results.get(step.id) else {}
            lost = lost or bool(m.get("trail_lost"))
            total += float(m.get(quantity, 0.0) or 0.0)
        values.append(total)
    return values, lost


def series_judge(spec: ProbeSpec) -> Callable[[JudgeContext], Outcome]:
    """Judge attached to the last measured step of a probe: reads every measured step of the sweep."""

    def judge(ctx: JudgeContext) -> Outcome:
        measured = [s for s in ctx.plan.steps if s.meta.get("probe") == spec.check and "measure" in s.wire]
        for step in measured:
            got = ctx.candidate_steps.get(step.id)
            sub = JudgeContext(step=step, plan=ctx.plan, got=got, expected=ctx.expected, golden=ctx.golden,
                               not_run_reason=ctx.not_run_reason)
            failed = failure_from_exception(sub)
            if failed:
                return Outcome(failed.verdict, f"The probe could not measure ({step.describe}): {failed.message}",
                               failed.details)
        sizes = sorted({s.meta["size"] for s in measured})
        groups = [[s for s in measured if s.meta["size"] == size] for size in sizes]
        quantity = spec.quantity
        candidate, lost = _series(ctx, ctx.candidate_steps, groups, quantity)
        if lost or (quantity == "flops" and not all(candidate)):
            quantity = "seconds"
            candidate, _ = _series(ctx, ctx.candidate_steps, groups, quantity)
        reference, _ = _series(ctx, ctx.expected_steps, groups, quantity)
        if not all(math.isfinite(v) for v in candidate + reference) or not all(reference):
            raise GraderBug(f"probe {spec.check}: the reference's {quantity} could not be measured: {reference}")
        outcome = judge_series(spec, sizes, candidate, reference, quantity)
        last = ctx.candidate_steps.get(measured[-1].id)
        device = ((last.report.get("measure") or {}).get("device") if last else None) or "cpu"
        return Outcome(outcome.verdict, outcome.message, {**outcome.details, "device": device})

    return judge
