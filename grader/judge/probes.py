"""Complexity probes, host side: declare a sweep, and judge how the candidate's cost grows.

A probe (``[[probes]]`` in ``exercise.toml``) names a complexity check, the quantity measured
(``flops``, ``kv_flops``, ``peak_bytes`` or ``seconds``), the swept size and its values (at least 4), and bounds
relative to the reference measured on the same sizes in the same grading run:

* ``max_ratio``: candidate / reference at every size;
* ``max_ratio_slope``: the fitted log-log slope of that ratio against size, i.e. how much faster
  than the reference the candidate's cost may grow (0 = same growth; 1 = an extra factor of the size).

Counts (FLOPs, bytes) are deterministic, so verdicts based on them cannot flip under machine load.
``kv_flops`` isolates one term of the work by provenance (``grader.run.instruments.track``): only
products that consume the tracked arguments (W_k, W_v, or slices, copies and concatenations of them)
count, so per-head loops and hand-written softmaxes, which a correct solution may spend freely, do
not. Time is used only when counting was impossible (the NumPy trail was lost); a failure then needs
the bounds widened by ``TIME_MARGIN`` and a measurable time, otherwise the check is skipped and not
charged. Each outcome records ``method`` (``count`` or ``time``) so a self-check can count how many
were timed. The hint ("Likely mistake: ...") is chosen by what was measured (``Hint``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from typing import Callable

import numpy as np

from grader.judge.forgery import memory_tamper_flag, memory_unobserved_flag, tamper_flag
from grader.judge.judges import GraderBug, JudgeContext, Outcome, Symptom, failure_from_exception, with_hint
from grader.judge.verdicts import Verdict

QUANTITIES = ("flops", "kv_flops", "peak_bytes", "seconds")
#: Timing fallback: a failure needs the ratio bound times the first, or the slope bound plus the second.
TIME_MARGIN = (5.0, 0.5)
#: Why a counted probe fell back to time: the counting arrays' trail was lost (the candidate converted
#: its inputs to plain arrays or lists) ...
LOST_TRAIL = "the inputs were converted away from the counting arrays"
#: ... or nothing was counted at some size though the trail held (the work went through operations the
#: counter does not see); ``{what}`` is the quantity's description.
NOTHING_COUNTED = "the counter saw no {what} at some size (it went through operations the counter does not see)"
#: ... or the counter saw a small fraction of the reference's work (``LITTLE_COUNTED``): the same
#: computation costs about the same FLOPs however it is written, so a count far below the reference's
#: means work went where the counter does not look (NumPy inside the torch track, a tensor's buffer
#: read as a plain array, torch dispatch switched off; helper hunt, issue 24: quadratic files counted at
#: 0.02-0.25x the reference's work had full marks). ``{ratio}`` is the fraction at the largest size.
LITTLE_COUNTED = ("the counter saw only {ratio:.2g}x the reference's work at the largest size (the rest went "
                  "through operations the counter does not see)")
#: Below this fraction of the reference's counted work at the largest size, counts give way to time.
LITTLE_COUNTED_FRACTION = 0.3
#: Timing fallback: below this candidate time at the largest size (seconds) a clock cannot decide.
TIME_MEASURABLE_S = 1e-3
WHAT = {"flops": "Work", "kv_flops": "Work of projecting keys and values", "peak_bytes": "Peak memory",
        "seconds": "Time", "largest_numel": "The largest single array"}
COUNTED = ("flops", "kv_flops")


@dataclass(frozen=True)
class Hint:
    """A likely mistake, named only when the measured figures look like it.

    Attributes:
        text: the sentence shown after "Likely mistake:".
        quantity: the measured series the conditions read (default: the probe's own quantity).
        grows: True: the ratio to the reference grows with the size (fitted slope above the probe's
            ``max_ratio_slope``); False: it does not; None: either.
        min_ratio / max_ratio: the ratio at the largest size lies in ``[min_ratio, max_ratio]``.
        symptom: the text describes what the figures show (what grows, with an example of a cause)
            and names no cause: shown without the "Likely mistake" label (``grader.judge.judges.Symptom``).
            Growth alone is not evidence of one cause (several structures cost the same), so a hint
            read from a growth or a ratio is a symptom unless its quantity singles the cause out
            (keys and values projected again: the K/V work itself grows).
    """

    text: str
    quantity: str | None = None
    grows: bool | None = None
    min_ratio: float = 0.0
    max_ratio: float = math.inf
    symptom: bool = False

    @classmethod
    def from_toml(cls, doc: dict) -> "Hint":
        """Build from one ``[[probes.hints]]`` table."""
        return cls(text=doc["text"], quantity=doc.get("quantity"), grows=doc.get("grows"),
                   min_ratio=float(doc.get("min_ratio", 0.0)), max_ratio=float(doc.get("max_ratio", math.inf)),
                   symptom=bool(doc.get("symptom", False)))


@dataclass(frozen=True)
class ProbeSpec:
    """One declared probe.

    Attributes:
        check: id of the complexity check it decides.
        quantity: ``flops`` (all work), ``kv_flops`` (work done with the ``track``-ed arguments:
            products that consume them, or data moved from them), ``peak_bytes`` or ``seconds``.
        sweep: name of the swept size (``seq_len``, ``T``, ``n``), for messages.
        sizes: the swept values, increasing.
        max_ratio: largest allowed candidate/reference ratio at any size.
        max_ratio_slope: largest allowed log-log slope of the ratio against size.
        repeat: timing repeats (minimum kept).
        hints: likely mistakes, each named only when the measurement matches it (first match wins);
            a plain ``hint = "..."`` is a hint whose one condition is growth (the ratio grows), shown as
            a symptom (no cause).
        track: labels of the arguments whose provenance ``kv_flops`` follows (``W_k``, ``W_v``).
        judge_each_path: besides the sum over every measured step of a size, judge each path's own
            series (``probe_paths``): for a probe whose paths differ in order of cost (a decode step and
            a chunk, a square mask and a few queries over a long cache), where the costliest path's
            share of the sum would hide a cost that grows on a cheaper one.
        largest_array: a ``peak_bytes`` probe also judges the elements of the largest single array a
            call allocates (``largest_numel``) against the reference's: it must grow no faster
            (``max_ratio_slope``; its size is not bounded by ``max_ratio``, only its growth). For a
            contract that forbids holding an ``L_q x L_k`` matrix at all: a bool mask of that shape is
            a small part of the peak bytes at a probe's sizes, beside ``L_q x block_size`` float
            temporaries, but it is the largest array by far and grows like ``L^2``.
    """

    check: str
    quantity: str
    sweep: str
    sizes: tuple[int, ...]
    max_ratio: float
    max_ratio_slope: float
    repeat: int = 3
    hints: tuple[Hint, ...] = ()
    track: tuple[str, ...] = ()
    judge_each_path: bool = False
    largest_array: bool = False

    @classmethod
    def from_toml(cls, doc: dict) -> "ProbeSpec":
        """Build from one ``[[probes]]`` table (already schema-validated)."""
        hints = tuple(Hint.from_toml(h) for h in doc.get("hints", ()))
        if doc.get("hint"):
            # a hint without conditions is read from the failure alone (something grows): a symptom,
            # never a cause (a full weights @ V costs what a full q @ k^T costs: helper hunt, issue 24)
            # It describes a structure that grows (an L_q x L_k array, work like L_q * L_k): shown only
            # where the ratio grows, never for a constant factor over the bound (a correct blocked
            # sliding window at 4.17x, flat, was told its work grows like L_q * L_k: helper hunt)
            hints += (Hint(doc["hint"], grows=True, symptom=True),)
        return cls(check=doc["check"], quantity=doc["quantity"], sweep=doc["sweep"],
                   sizes=tuple(int(s) for s in doc["sizes"]), max_ratio=float(doc["max_ratio"]),
                   max_ratio_slope=float(doc["max_ratio_slope"]), repeat=int(doc.get("repeat", 3)),
                   hints=hints, track=tuple(doc.get("track", ())),
                   judge_each_path=bool(doc.get("judge_each_path", False)),
                   largest_array=bool(doc.get("largest_array", False)))

    @property
    def hint(self) -> str:
        """The first hint's text (compatibility)."""
        return self.hints[0].text if self.hints else ""

    def measure(self) -> dict:
        """The runner's ``measure`` request for a probe step: the probe's quantity, those its hints
        read, ``flops`` with ``kv_flops`` (the counting trail), and seconds (for the fallback)."""
        quantities = {self.quantity, "seconds", *(h.quantity for h in self.hints if h.quantity)}
        if "kv_flops" in quantities:
            quantities.add("flops")
        if self.largest_array:
            quantities.add("largest_numel")
        request = {"quantities": sorted(quantities), "repeat": self.repeat}
        if self.track:
            request["track"] = list(self.track)
        return request


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
    if quantity == "largest_numel":
        return f"{value:,.0f} elements"
    return f"{value:.3g} FLOPs"


def _ratios(candidate: list[float], reference: list[float], quantity: str) -> list[float]:
    floor = 1e-9 if quantity == "seconds" else 1.0
    return [c / max(r, floor) for c, r in zip(candidate, reference)]


def choose_hint(spec: ProbeSpec, sizes: list[int], series: dict[str, tuple[list[float], list[float]]],
                quantity: str) -> str:
    """The text of the first hint whose conditions the measured series meet (a ``Symptom`` for a hint
    marked ``symptom``), or "".

    Args:
        spec: the probe.
        sizes: swept sizes.
        series: quantity -> (candidate values, reference values), for what was measured.
        quantity: the quantity the verdict was judged on (a hint without its own quantity reads it).
    """
    for hint in spec.hints:
        q = hint.quantity or quantity
        if q not in series:
            continue
        cand, ref = series[q]
        if not all(ref) or not all(math.isfinite(v) for v in cand + ref):
            continue
        ratios = _ratios(cand, ref, q)
        grows = fit_slope(sizes, [max(r, 1e-30) for r in ratios]) > spec.max_ratio_slope
        if hint.grows is not None and hint.grows != grows:
            continue
        if not hint.min_ratio <= ratios[-1] <= hint.max_ratio:
            continue
        return Symptom(hint.text) if hint.symptom else hint.text
    return ""


def judge_series(spec: ProbeSpec, sizes: list[int], candidate: list[float], reference: list[float],
                 quantity: str | None = None,
                 series: dict[str, tuple[list[float], list[float]]] | None = None,
                 fallback_reason: str = LOST_TRAIL) -> Outcome:
    """Judge one measured series against the reference's.

    Args:
        spec: the probe.
        sizes: swept sizes (increasing).
        candidate / reference: the measured quantity at each size.
        quantity: what was actually measured (``seconds`` when falling back from counts).
        series: every measured series (quantity -> (candidate, reference)), for choosing the hint.
        fallback_reason: why counts gave way to time (``LOST_TRAIL`` or ``NOTHING_COUNTED``), said in
            the message of a timed verdict.

    Returns:
        PASSED; FAILED with a message giving the worst size, both values, the ratio, the fitted
        exponents and the hint the measurement matches (if any); or, judged by time only, SKIPPED and
        not charged (``details["charged"] = False``) when the clock cannot tell with a clear margin.
        ``details`` carry sizes, both series, ratios, slopes and ``method`` (``count`` or ``time``).
    """
    quantity = quantity or spec.quantity
    fallback = quantity == "seconds" and spec.quantity != "seconds"
    max_ratio, max_slope = spec.max_ratio, spec.max_ratio_slope
    ratios = _ratios(candidate, reference, quantity)
    ratio_slope = fit_slope(sizes, [max(r, 1e-30) for r in ratios])
    details = {
        "probe": spec.check, "quantity": quantity, "sweep": spec.sweep, "sizes": list(sizes),
        "candidate": list(candidate), "reference": list(reference), "ratios": ratios,
        "candidate_slope": fit_slope(sizes, candidate), "reference_slope": fit_slope(sizes, reference),
        "ratio_slope": ratio_slope, "max_ratio": max_ratio, "max_ratio_slope": max_slope,
        "timing_fallback": fallback, "method": "time" if quantity == "seconds" else "count",
    }
    # the ratio bound is judged on the larger half of the sweep, where the asymptotic cost shows: a
    # chunked algorithm whose one chunk is the whole sequence at the smallest sizes is quadratic there
    # and linear beyond (helper hunt: chunked linear attention with chunks of 256 peaked at 9.5x at
    # L = 256, 4x at L = 1024, and was charged); growth is the slope's to judge
    half = len(ratios) // 2
    worst = half + int(np.argmax(ratios[half:]))
    growth = (f"cost grows as {spec.sweep}^{details['candidate_slope']:.2f} vs the reference's "
              f"{spec.sweep}^{details['reference_slope']:.2f}")
    where = (f"at {spec.sweep}={sizes[worst]} it took {_fmt(candidate[worst], quantity)}, "
             f"{ratios[worst]:.3g}x the reference's {_fmt(reference[worst], quantity)}")
    grows, costly = ratio_slope > max_slope, ratios[worst] > max_ratio
    if not (grows or costly):
        return Outcome(Verdict.PASSED, "", details)
    if fallback:
        clear = ((ratio_slope > max_slope + TIME_MARGIN[1] or ratios[worst] > max_ratio * TIME_MARGIN[0])
                 and candidate[-1] >= TIME_MEASURABLE_S)
        if not clear:
            return Outcome(Verdict.SKIPPED,
                           f"Could not judge: {fallback_reason}, so this was timed, and the clock cannot tell with a "
                           f"clear margin ({where}); not charged.",
                           {**details, "charged": False})
        note = f" (measured by time because {fallback_reason})"
    else:
        note = ""
    if grows:
        message = f"{WHAT[quantity]} grows faster than the reference's: {growth}; {where}{note}."
    else:
        message = f"{WHAT[quantity]} is too large compared with the reference's: {where} (allowed {max_ratio:g}x){note}."
    hint = choose_hint(spec, sizes, {**(series or {}), quantity: (list(candidate), list(reference))}, quantity)
    message, noted = with_hint(message, hint)
    return Outcome(Verdict.FAILED, message, {**details, "hint": str(hint or ""), **noted})


def measured_groups(plan, check: str) -> tuple[list[int], list[list]]:
    """``(sizes, groups)``: the swept sizes of the probe ``check`` (increasing) and, for each, its
    measured plan steps (those with a ``measure`` request), in plan order."""
    measured = [s for s in plan.steps if s.meta.get("probe") == check and "measure" in s.wire]
    sizes = sorted({s.meta["size"] for s in measured})
    return sizes, [[s for s in measured if s.meta["size"] == size] for size in sizes]


def per_size(groups: list[list], value: Callable[[object], float | None]) -> list[float | None]:
    """``value(step)`` summed over each size's group of measured steps (``measured_groups``); None for a
    size where any step's value is None (not measured, not observed). The one sum behind the probe's
    verdict, its host-observed cross-check and the replay of a mutant's measurements
    (``grader.grading.diagnosis.measured_series``)."""
    totals: list[float | None] = []
    for group in groups:
        seen = [value(step) for step in group]
        totals.append(None if any(v is None for v in seen) else float(sum(seen)))
    return totals


def _measure(results: dict, step) -> dict:
    """The ``measure`` report of ``step`` in ``results`` (empty when the step has none)."""
    got = results.get(step.id)
    return (got.report.get("measure") or {}) if got else {}


def _series(results: dict, groups: list[list], quantity: str) -> tuple[list[float], bool]:
    """Sum ``quantity`` over the measured steps of each size (a missing figure counts 0); report
    whether any trail was lost."""
    values = per_size(groups, lambda step: float(_measure(results, step).get(quantity) or 0.0))
    return values, any(_measure(results, step).get("trail_lost") for group in groups for step in group)


#: ``details`` key of an interviewer-only flag (the candidate view drops it and the note).
INTERVIEWER_FLAG = "interviewer_flag"
#: Prefix of the message of a passed check that carries an interviewer-only flag.
INTERVIEWER_NOTE = "Interviewer note: "


def _observed(results: dict, groups: list[list], what: str = "observed_cpu_seconds") -> list[float | None]:
    """Host-observed CPU seconds (or ``observed_peak_bytes``) summed over the measured steps of each
    size (None if any step of a size was not observed): see ``grader.sandbox.observe``."""
    return per_size(groups, lambda step: getattr(results[step.id], what) if step.id in results else None)


def probe_paths(groups: list[list]) -> list[str]:
    """The paths a probe measures, in plan order: the distinct ``meta["path"]`` of its measured steps
    (``""`` for a step without one). A path is one setting of the options that change the algorithm
    (``causal``, a mask, a decode step or a chunk, ...); each size measures every path once."""
    paths: list[str] = []
    for group in groups:
        for step in group:
            if step.meta.get("path", "") not in paths:
                paths.append(step.meta.get("path", ""))
    return paths


_MISMATCH = re.compile(r"same device|device type|on device cuda|cuda:\d+ and cpu|cpu and cuda|on cpu and .* on cuda",
                       re.I)


def _device_mismatch_on_gpu(step, got) -> bool:
    """Whether a probe step on CUDA raised because the code mixed devices (its message says so)."""
    from grader.run.runner import _step_device  # noqa: PLC0415 - the wire format's own reader

    if _step_device(step.wire) != "cuda":
        return False
    exc = (got.report.get("exception") if got is not None else None) or {}
    text = f"{exc.get('type', '')}: {exc.get('message', '')}" if isinstance(exc, dict) else str(exc)
    return bool(_MISMATCH.search(text))


def series_judge(spec: ProbeSpec) -> Callable[[JudgeContext], Outcome]:
    """Judge attached to the last measured step of a probe: reads every measured step of the sweep.

    The sum over all measured steps of each size is judged first; when the probe asks for it
    (``judge_each_path``), measures several paths (``probe_paths``) and the sum passes, each path's own
    series is judged too, so a cost that grows on one path only is not hidden by a costlier path (a
    chunk appended to a cache next to a decode step, a few queries over a long cache next to a square
    mask). A failure of one path says which path it was (``details["path"]``); only counted figures
    decide a path, never the clock."""

    def judge(ctx: JudgeContext) -> Outcome:
        sizes, groups = measured_groups(ctx.plan, spec.check)
        measured = [s for group in groups for s in group]  # by size: the plan's order of a sweep
        for step in measured:
            got = ctx.candidate_steps.get(step.id)
            sub = JudgeContext(step=step, plan=ctx.plan, got=got, expected=ctx.expected, golden=ctx.golden,
                               not_run_reason=ctx.not_run_reason)
            failed = failure_from_exception(sub)
            if failed and _device_mismatch_on_gpu(step, got):
                return Outcome(Verdict.SKIPPED,
                               f"Not measured ({step.describe}): the probe ran on the GPU and the code made a "
                               "tensor on the CPU (a device mismatch). The statement does not require "
                               "device-agnostic code, so this is not charged.",
                               {**failed.details, "device_mismatch": True})
            if failed:
                return Outcome(failed.verdict, f"The probe could not measure ({step.describe}): {failed.message}",
                               failed.details)
        outcome = _judge_groups(spec, ctx, sizes, groups)
        paths = probe_paths(groups)
        if outcome.verdict != Verdict.PASSED or not spec.judge_each_path or len(paths) < 2:
            return outcome
        for path in paths:
            one = _judge_groups(spec, ctx, sizes, [[s for s in g if s.meta.get("path", "") == path] for g in groups])
            if one.verdict == Verdict.FAILED and one.details.get("method") == "count":  # a clock never decides a path
                note = (f"Judged on the {path} calls alone (the probe judges the sum of its paths and each "
                        f"path: {', '.join(paths)}).")
                return Outcome(one.verdict, f"{one.message}\n{note}", {**one.details, "path": path})
        return outcome

    return judge


def _largest_array(spec: ProbeSpec, sizes: list[int], ctx: JudgeContext, groups: list[list]) -> Outcome | None:
    """The failure of a ``largest_array`` probe whose peak bytes passed: the largest single array of
    its calls (``largest_numel``, summed over a size's calls as the peak is) grows faster than the
    reference's (ratio slope above ``max_ratio_slope``). None when it does not, or when either side
    did not report the figure (a GPU run, a trail the NumPy counting arrays lost: never charged)."""
    paths = probe_paths(groups)
    worst: tuple[Outcome, str] | None = None
    for path in [None, *(paths if len(paths) > 1 else ())]:
        some = groups if path is None else [[s for s in g if s.meta.get("path", "") == path] for g in groups]
        candidate = per_size(some, lambda step: _measure(ctx.candidate_steps, step).get("largest_numel"))
        reference = per_size(some, lambda step: _measure(ctx.expected_steps, step).get("largest_numel"))
        if any(v is None or v <= 0 for v in candidate + reference):
            return None
        outcome = judge_series(replace(spec, max_ratio=math.inf), sizes, candidate, reference, "largest_numel")
        if outcome.verdict == Verdict.FAILED and (
                worst is None or outcome.details["ratio_slope"] > worst[0].details["ratio_slope"]):
            worst = (outcome, path)  # the path where it grows fastest: the sum dilutes it with other paths
    if worst is None:
        return None
    outcome, path = worst
    note = ("Peak memory itself stayed within bounds at these sizes, where the largest array is a small"
            " part of it; it would not at larger ones.")
    if path is not None:
        note += f"\nJudged on the {path} calls alone (the largest array is judged on the sum of the paths and each path)."
        return Outcome(Verdict.FAILED, f"{outcome.message}\n{note}", {**outcome.details, "path": path})
    return Outcome(Verdict.FAILED, f"{outcome.message}\n{note}", outcome.details)


def fallback_reason(quantity: str, lost: bool, flops: list[float], counted: list[float],
                    reference_flops: list[float] | None = None) -> str | None:
    """Why a counted probe (``quantity`` in ``COUNTED``) must be judged by time instead, or None when its
    counts can be judged: the counting trail was lost (``LOST_TRAIL``), the counter saw no work
    (``flops``) or none of ``quantity`` (``counted``) at some size (``NOTHING_COUNTED``), or the work it
    saw at the largest size is below ``LITTLE_COUNTED_FRACTION`` of ``reference_flops`` there
    (``LITTLE_COUNTED``)."""
    if lost:
        return LOST_TRAIL
    if not all(flops):
        return NOTHING_COUNTED.format(what=WHAT["flops"].lower())
    if not all(counted):
        return NOTHING_COUNTED.format(what=WHAT[quantity].lower())
    if reference_flops and reference_flops[-1] > 0 and flops[-1] < LITTLE_COUNTED_FRACTION * reference_flops[-1]:
        return LITTLE_COUNTED.format(ratio=flops[-1] / reference_flops[-1])
    return None


def _judge_groups(spec: ProbeSpec, ctx: JudgeContext, sizes: list[int], groups: list[list]) -> Outcome:
    """The probe's verdict on the measured steps ``groups`` (one list per size): counts (or, where the
    trail was lost, time) summed per size and judged against the reference's (``judge_series``), with
    the interviewer-only cross-checks of host-observed CPU time and peak bytes."""
    measured = [s for group in groups for s in group]
    quantity = spec.quantity
    candidate, lost = _series(ctx.candidate_steps, groups, quantity)
    reason = None
    if quantity in COUNTED:
        reason = fallback_reason(quantity, lost, _series(ctx.candidate_steps, groups, "flops")[0], candidate,
                                 _series(ctx.expected_steps, groups, "flops")[0])
        if reason:
            quantity = "seconds"
            candidate, _ = _series(ctx.candidate_steps, groups, quantity)
    reference, _ = _series(ctx.expected_steps, groups, quantity)
    if not all(math.isfinite(v) for v in candidate + reference) or not all(reference):
        raise GraderBug(f"probe {spec.check}: the reference's {quantity} could not be measured: {reference}")
    series = {}
    for q in {h.quantity for h in spec.hints if h.quantity} - {quantity}:
        if q in COUNTED and quantity == "seconds":
            continue
        series[q] = (_series(ctx.candidate_steps, groups, q)[0], _series(ctx.expected_steps, groups, q)[0])
    outcome = judge_series(spec, sizes, candidate, reference, quantity, series, reason or LOST_TRAIL)
    last = ctx.candidate_steps.get(measured[-1].id)
    device = ((last.report.get("measure") or {}).get("device") if last else None) or "cpu"
    details, message = {**outcome.details, "device": device}, outcome.message
    if outcome.verdict == Verdict.PASSED and quantity in COUNTED and device == "cpu":
        observed = _observed(ctx.candidate_steps, groups)
        details["observed_cpu_seconds"] = observed
        flag = tamper_flag(spec.sweep, sizes, observed, _series(ctx.candidate_steps, groups, "flops")[0])
        if flag:
            details[INTERVIEWER_FLAG] = flag
            message = f"{INTERVIEWER_NOTE}{flag['message']}."
    if outcome.verdict == Verdict.PASSED and quantity == "peak_bytes" and spec.largest_array:
        largest = _largest_array(spec, sizes, ctx, groups)
        if largest is not None:
            return largest
    if quantity == "peak_bytes" and device == "cpu":
        observed = _observed(ctx.candidate_steps, groups, "observed_peak_bytes")
        details["observed_peak_bytes"] = observed
        missed = [any(getattr(ctx.candidate_steps.get(s.id), "observed_peak_missed", False) for s in group)
                  for group in groups]
        flag = (memory_tamper_flag(spec.sweep, sizes, observed, candidate)
                or memory_unobserved_flag(spec.sweep, sizes, observed, missed))
        if flag and outcome.verdict == Verdict.PASSED:
            details[INTERVIEWER_FLAG] = flag
            message = f"{INTERVIEWER_NOTE}{flag['message']}."
    return Outcome(outcome.verdict, message, details)

