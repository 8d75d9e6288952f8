"""Judging logic of complexity probes, driven with made-up series and an injected clock."""
import itertools

import numpy as np
import pytest

from grader.run.instruments import CountingArray, COUNTER, Measurement, min_seconds
from grader.judge.probes import ProbeSpec, fit_slope, judge_series

SPEC = ProbeSpec(check="c", quantity="flops", sweep="T", sizes=(16, 32, 64, 128), max_ratio=4.0,
                 max_ratio_slope=0.3, hint="re-projects every cached token")


def test_fit_slope_recovers_exponents():
    sizes = [16, 32, 64, 128]
    assert fit_slope(sizes, [s ** 2 for s in sizes]) == pytest.approx(2.0)
    assert fit_slope(sizes, [7.0] * 4) == pytest.approx(0.0, abs=1e-12)


def test_same_growth_within_the_ratio_passes():
    sizes = list(SPEC.sizes)
    ref = [100.0 * s for s in sizes]
    out = judge_series(SPEC, sizes, [3.0 * r for r in ref], ref)
    assert out.verdict == "passed"
    assert out.details["ratios"] == pytest.approx([3.0] * 4)
    assert out.details["candidate_slope"] == pytest.approx(1.0)


def test_faster_growth_fails_with_the_hint_and_both_exponents():
    sizes = list(SPEC.sizes)
    ref = [100.0 * s for s in sizes]
    cand = [100.0 * s * s / 16 for s in sizes]  # equal at the smallest size, then grows like T^2
    out = judge_series(SPEC, sizes, cand, ref)
    assert out.verdict == "failed"
    assert out.message.startswith("Likely mistake: re-projects every cached token")
    assert "T^2.00" in out.message and "T^1.00" in out.message
    assert out.details["ratio_slope"] == pytest.approx(1.0)


def test_constant_factor_over_the_bound_fails():
    sizes = list(SPEC.sizes)
    ref = [float(s) for s in sizes]
    out = judge_series(SPEC, sizes, [10.0 * r for r in ref], ref)
    assert out.verdict == "failed" and "allowed 4x" in out.message


def test_timing_fallback_widens_the_margins():
    sizes = list(SPEC.sizes)
    ref = [1e-3 * s for s in sizes]
    noisy = [r * f for r, f in zip(ref, [1.0, 1.6, 0.9, 1.8])]  # noise, not growth
    assert judge_series(SPEC, sizes, noisy, ref, quantity="seconds").verdict == "passed"
    quadratic = [1e-3 * s * s for s in sizes]
    assert judge_series(SPEC, sizes, quadratic, ref, quantity="seconds").verdict == "failed"


def test_min_seconds_with_an_injected_clock():
    ticks = itertools.count()
    durations = iter([5, 2, 9])
    now = [0.0]

    def clock():
        next(ticks)
        return now[0]

    def work():
        now[0] += next(durations)

    assert min_seconds(work, 3, clock=clock) == 2


def test_counting_array_counts_matmul_flops_and_elementwise_work():
    a = np.ones((3, 4)).view(CountingArray)
    b = np.ones((4, 5))
    with Measurement(["flops"]) as m:
        c = a @ b
        np.exp(c)
    assert m.report["matmul_flops"] == 2 * 3 * 4 * 5
    assert m.report["elementwise"] == 15 + 15
    assert not m.report["trail_lost"]
    assert not COUNTER.active


def test_counting_array_einsum_and_lost_trail():
    q = np.ones((2, 6, 8)).view(CountingArray)
    k = np.ones((2, 7, 8))
    with Measurement(["flops"]) as m:
        np.einsum("bqd,bkd->bqk", q, k)
    assert m.report["matmul_flops"] == 2 * 2 * 6 * 7 * 8
    with Measurement(["flops"]) as lost:
        np.asarray(q) @ k.transpose(0, 2, 1)
    assert lost.report["trail_lost"] and lost.report["flops"] == 0


def test_peak_bytes_sees_numpy_temporaries():
    with Measurement(["peak_bytes"]) as m:
        np.ones((1000, 1000))  # 8 MB temporary
    assert 8_000_000 <= m.report["peak_bytes"] < 9_000_000


def test_torch_counter_counts_multiply_then_sum():
    torch = pytest.importorskip("torch")
    a, b = torch.ones(4, 8), torch.ones(8, 3)
    with Measurement(["flops", "peak_bytes"], uses_torch=True) as mm:
        a @ b
    with Measurement(["flops"], uses_torch=True) as ms:
        (a[:, :, None] * b[None, :, :]).sum(1)
    assert mm.report["matmul_flops"] == 2 * 4 * 8 * 3
    assert ms.report["matmul_flops"] == 0 and ms.report["elementwise"] >= 4 * 8 * 3
    assert mm.report["peak_bytes"] >= 4 * 3 * 4
