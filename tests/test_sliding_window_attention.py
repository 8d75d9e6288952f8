"""The sliding_window_attention exercise: both references against torch's SDPA with an explicit band
mask (float64), the host's band and full-attention model, the probes on every path, the report's
log-log plot, and wrong files failing the check they name."""

import importlib.util

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from attention_helpers import ROOT, failed, judge_in_process, messages
from mutant_helpers import assert_named_as, mutant_file
from grader.cohort import plots
from grader.grading.exercise import get_exercise
from grader.run.instruments import Measurement, instrument_numpy

EX = "sliding_window_attention"
SAMPLES = ROOT / "submissions" / "samples" / EX


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ref = _load(ROOT / "reference" / f"{EX}.py", "test_reference_swa")
ref_np = _load(ROOT / "reference" / f"{EX}_numpy.py", "test_reference_swa_numpy")
checks = get_exercise(EX).checks_module


def _band(L_q, L_k, window, causal):
    """(L_q, L_k) bool written from the contract's words: query i at p = i + L_k - L_q sees key j iff
    p - window < j <= p (causal) or |p - j| < window."""
    keep = torch.zeros(L_q, L_k, dtype=torch.bool)
    for i in range(L_q):
        p = i + L_k - L_q
        for j in range(L_k):
            keep[i, j] = (p - window < j <= p) if causal else abs(p - j) < window
    return keep


def _sdpa(q, k, v, keep):
    """torch's SDPA with a boolean mask, rows that see no key set to 0 (SDPA gives NaN there)."""
    keep = torch.broadcast_to(keep, q.shape[:-1] + (k.shape[-2],))
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=keep)
    return torch.where(keep.any(-1, keepdim=True), out, torch.zeros_like(out))


def _qkv(B, H, L_q, L_k, d, d_v, seed):
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(B, H, n, w, generator=g, dtype=torch.float64, requires_grad=True)
                 for n, w in ((L_q, d), (L_k, d), (L_k, d_v)))


CASES = [(12, 12, 3, True), (12, 12, 3, False), (13, 13, 4, True), (11, 11, 1, True), (11, 11, 1, False),
         (9, 9, 9, True), (7, 7, 50, False), (5, 17, 4, True), (5, 17, 4, False), (1, 21, 6, True),
         (14, 6, 3, True), (14, 6, 3, False)]


@pytest.mark.parametrize("L_q,L_k,window,causal", CASES)
@pytest.mark.parametrize("masked", [False, True])
def test_reference_matches_sdpa_with_a_band_mask_values_and_gradients(L_q, L_k, window, causal, masked):
    q, k, v = _qkv(2, 3, L_q, L_k, 8, 5, seed=L_q * 100 + L_k + window)
    keep = _band(L_q, L_k, window, causal)
    mask = None
    if masked:
        mask = torch.ones(2, 1, 1, L_k, dtype=torch.bool)
        mask[1, ..., :2] = False
        mask[1, ..., -1] = False
        keep = keep & mask
    out = ref.sliding_window_attention(q, k, v, window, causal, mask)
    expected = _sdpa(q, k, v, keep)
    torch.testing.assert_close(out, expected, rtol=1e-10, atol=1e-12)
    up = torch.randn(out.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    ours = torch.autograd.grad(out, (q, k, v), up)
    theirs = torch.autograd.grad(expected, (q, k, v), up)
    for a, b in zip(ours, theirs):
        assert torch.isfinite(a).all()
        torch.testing.assert_close(a, b, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("L_q,L_k,window,causal", CASES)
def test_numpy_reference_matches_sdpa_with_numeric_masks(L_q, L_k, window, causal):
    q, k, v = (t.detach() for t in _qkv(2, 2, L_q, L_k, 8, 4, seed=window + L_k))
    rng = np.random.default_rng(L_q)
    mask = np.where(rng.random((2, 1, L_q, L_k)) < 0.3, 0.0, rng.choice([0.5, -2.0, 3.0], (2, 1, L_q, L_k)))
    out = ref_np.sliding_window_attention(q.numpy(), k.numpy(), v.numpy(), window, causal, mask)
    expected = _sdpa(q, k, v, _band(L_q, L_k, window, causal) & torch.from_numpy(mask != 0))
    np.testing.assert_allclose(out, expected.numpy(), rtol=1e-10, atol=1e-12)


def test_a_window_at_least_the_length_is_full_causal_attention_bottom_right():
    q, k, v = (t.detach() for t in _qkv(1, 2, 6, 10, 8, 8, seed=3))
    tril = torch.ones(6, 10, dtype=torch.bool).tril(10 - 6)   # bottom-right causal mask
    for window in (10, 11, 1000):
        torch.testing.assert_close(ref.sliding_window_attention(q, k, v, window), _sdpa(q, k, v, tril))
        torch.testing.assert_close(ref.sliding_window_attention(q, k, v, window, False),
                                   F.scaled_dot_product_attention(q, k, v))
    # the host's own dense model says the same (full_window judges candidates against it)
    np.testing.assert_allclose(checks.full_attention64(q.numpy(), k.numpy(), v.numpy(), tril.numpy()),
                               ref.sliding_window_attention(q, k, v, 10).numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("L_q,L_k,window,causal", CASES)
def test_host_band_model_follows_the_contract(L_q, L_k, window, causal):
    np.testing.assert_array_equal(checks.band64(L_q, L_k, window, causal), _band(L_q, L_k, window, causal).numpy())


def test_half_precision_is_accumulated_in_float32_and_keeps_its_dtype():
    q, k, v = (t.detach() for t in _qkv(1, 2, 16, 16, 8, 8, seed=4))
    for dtype in (torch.float16, torch.bfloat16):
        args = [t.to(dtype) for t in (q, k, v)]
        out = ref.sliding_window_attention(*args, 5)
        assert out.dtype == dtype
        exact = ref.sliding_window_attention(*[a.double() for a in args], 5)
        torch.testing.assert_close(out.double(), exact.to(dtype).double(), rtol=0, atol=0)  # float32 internals: one rounding
    h = [t.numpy().astype(np.float16) for t in (q, k, v)]
    out = ref_np.sliding_window_attention(*h, 5)
    assert out.dtype == np.float16
    exact = ref_np.sliding_window_attention(*[a.astype(np.float64) for a in h], 5)
    np.testing.assert_allclose(out.astype(np.float64), exact, atol=2e-3)


@pytest.mark.parametrize("window", [0, -2, 2.0, True, "3"])
def test_references_reject_a_bad_window(window):
    q = torch.zeros(1, 1, 4, 2)
    with pytest.raises(ValueError, match="window"):
        ref.sliding_window_attention(q, q, q, window)
    with pytest.raises(ValueError, match="window"):
        ref_np.sliding_window_attention(q.numpy(), q.numpy(), q.numpy(), window)


def test_references_leave_their_inputs_alone():
    q, k, v = (t.detach() for t in _qkv(1, 2, 7, 7, 4, 4, seed=5))
    mask = torch.ones(1, 1, 1, 7)
    before = [t.clone() for t in (q, k, v, mask)]
    ref.sliding_window_attention(q, k, v, 3, False, mask)
    arrays = [t.numpy().copy() for t in before]
    ref_np.sliding_window_attention(*arrays[:3], 3, True, arrays[3])
    for a, b, c in zip((q, k, v, mask), before, arrays):
        assert torch.equal(a, b) and np.array_equal(c, b.numpy())


# -- the probes: linear at a fixed window on every path, quadratic for an L x L detour -----------------

PATHS = [(True, False), (True, True), (False, False), (False, True)]


def _cost(module, L, causal, masked, track):
    g = torch.Generator().manual_seed(L)
    q, k, v = (torch.randn(1, 2, L, 8, generator=g) for _ in range(3))
    mask = None
    if masked:
        mask = torch.ones(1, 1, 1, L, dtype=torch.bool)
        mask[..., L - L // 8:] = False
    args = (q, k, v) if track == "torch" else tuple(instrument_numpy(t.numpy()) for t in (q, k, v))
    if track == "numpy" and mask is not None:
        mask = mask.numpy()
    with Measurement(["peak_bytes", "flops"], uses_torch=track == "torch") as m:
        module.sliding_window_attention(*args, 4, causal, mask)
    return m.report["peak_bytes"], m.report["flops"]


@pytest.mark.parametrize("track", ["torch", "numpy"])
@pytest.mark.parametrize("causal,masked", PATHS)
def test_reference_cost_is_linear_and_a_dense_band_is_quadratic_on_each_path(track, causal, masked):
    """Peak bytes and counted FLOPs at the probe's window: the reference's grow like L on this path,
    those of a solution that builds the L x L scores and masks them like L^2 (ratio slope near 1)."""
    reference = ref if track == "torch" else ref_np
    dense = _load(SAMPLES / ("bug_dense_band_mask.py" if track == "torch" else "numpy/bug_full_scores.py"),
                  f"test_dense_{track}")
    sizes = [96, 192, 384]
    ours = [_cost(reference, L, causal, masked, track) for L in sizes]
    theirs = [_cost(dense, L, causal, masked, track) for L in sizes]
    for which in (0, 1):
        slope_ref = np.polyfit(np.log(sizes), np.log([c[which] for c in ours]), 1)[0]
        ratio_slope = np.polyfit(np.log(sizes), np.log([t[which] / o[which] for t, o in zip(theirs, ours)]), 1)[0]
        assert 0.8 < slope_ref < 1.2, (which, slope_ref)
        assert ratio_slope > 0.7, (which, ratio_slope)


# A correct per-query loop that scores each query against all L_k keys on exactly one path, then keeps
# its window: L x L work (one row at a time, so memory stays linear). The FLOPs probe sums the five paths, so
# the detour on any one of them alone must fail flops_scaling, and nothing else.
DETOUR = ("        s = torch.einsum(\"bhd,bhkd->bhk\", q[:, :, i], k[:, :, lo:hi]) / math.sqrt(d_k)\n")


def _detour_on(causal, masked):
    cond = f"causal is {causal} and (mask is not None) is {masked}"
    source = (SAMPLES / "correct_per_query_loop.py").read_text(encoding="utf-8")
    assert source.count(DETOUR) == 1
    return source.replace(DETOUR, DETOUR + f"        if {cond}:  # the whole row of scores, then the window\n"
                          "            s = (q[:, :, i:i + 1] @ k.transpose(-2, -1) / math.sqrt(d_k))[:, :, 0, lo:hi]\n")


@pytest.mark.slow
@pytest.mark.parametrize("causal,masked", PATHS)
def test_the_probes_catch_an_l_by_l_detour_on_each_single_path(causal, masked, tmp_path):
    path = tmp_path / f"detour_{causal}_{masked}.py"
    path.write_text(_detour_on(causal, masked), encoding="utf-8")
    from grader.grading.grade import _MEASURE_LOCK, grade_submission  # noqa: PLC0415
    from grader.grading.trusted import TrustedInProcess  # noqa: PLC0415

    card = grade_submission(get_exercise(EX), path, seed=3, trusted_runner=TrustedInProcess(path.name, _MEASURE_LOCK))
    verdicts = {c.id: c.verdict for c in card.checks}
    assert verdicts["flops_scaling"] == "failed", card.checks
    assert {v for cid, v in verdicts.items() if cid != "flops_scaling"} == {"passed"}, verdicts


@pytest.mark.slow
@pytest.mark.parametrize("track", ["torch", "numpy"])
@pytest.mark.parametrize("name", ["full_scores", "full_scores_when_masked", "full_scores_when_not_causal"])
def test_each_detour_of_the_bank_fails_both_probes_and_is_named(track, name, tmp_path):
    """The bank's three detours (every path, the masked paths, the non-causal paths) cost different
    figures (the probe's paths have 1-4 heads), so replay names each one and only it."""
    ex = get_exercise(EX, track=track)
    source = mutant_file(EX, name, tmp_path, track=track).read_text(encoding="utf-8")
    card = assert_named_as(ex, source, name, tmp_path)
    assert {c.id for c in card.checks if c.verdict != "passed"} == {"memory_scaling", "flops_scaling"}


def test_the_report_plot_shows_the_linear_reference_next_to_a_quadratic_file(tmp_path):
    from grader.grading.grade import _MEASURE_LOCK, grade_submission  # noqa: PLC0415
    from grader.grading.trusted import TrustedInProcess  # noqa: PLC0415

    path = SAMPLES / "bug_dense_band_mask.py"
    card = grade_submission(get_exercise(EX), path, seed=3, trusted_runner=TrustedInProcess(path.name, _MEASURE_LOCK))
    for check in ("memory_scaling", "flops_scaling"):
        details = next(c for c in card.checks if c.id == check).details
        found = plots.find_series(details)
        assert found, details
        series = found[0]["series"]
        sizes = np.log(found[0]["sizes"])
        slopes = {label: np.polyfit(sizes, np.log(values), 1)[0] for label, values in series.items()}
        assert len(slopes) == 2, slopes
        low, high = sorted(slopes.values())
        assert 0.8 < low < 1.25 and high > 1.6, slopes            # L * window next to L^2
        assert plots.loglog(found[0], check).startswith("data:image/svg+xml;base64,")


# -- wrong files fail the check they name ---------------------------------------------------------------

@pytest.mark.parametrize("sample,track,check,phrase", [
    ("bug_loop_window_plus_one.py", None, "window_one", "Mismatched"),
    ("bug_unfold_top_left.py", None, "cache_alignment", "Mismatched"),
    ("bug_mask_keeps_zeros.py", None, "masks", "Mismatched"),
    ("bug_softmax_nan_rows.py", None, "fully_masked_rows", "see no key"),
    ("bug_half_in_half.py", None, "half_precision", "Mismatched"),
    ("numpy/bug_window_ahead.py", "numpy", "values", "Mismatched"),
    ("numpy/bug_non_causal_past_only.py", "numpy", "non_causal", "Mismatched"),
    ("numpy/bug_mask_as_bias.py", "numpy", "masks", "Mismatched"),
    ("numpy/bug_float16_throughout.py", "numpy", "half_precision", "Mismatched"),
])
def test_wrong_sample_fails_its_check(sample, track, check, phrase):
    """Judged in-process without the bank (selfcheck proves each is named by replay): the check its
    docstring names fails, with the comparison's message (or, for NaN rows, the host's own hint)."""
    outcomes = judge_in_process(EX, SAMPLES / sample, track=track)
    assert check in failed(outcomes)
    assert phrase in messages(outcomes, check)


# A bank mistake written into a correct style of the repository's (the chunked blocks), named by replay.
CHUNK_EDITS = {
    "window_forward": [("ok = ((rel >= 0) & (rel < window)) if causal", "ok = ((rel <= 0) & (rel > -window)) if causal"),
                       ("hi = min(c + n + offset if causal else", "hi = min(c + n + offset + window - 1 if causal else")],
    "top_left": [("    offset = L_k - L_q\n", "    offset = 0\n")],
    "non_causal_one_sided": [("if causal else (rel.abs() < window)", "if True else (rel.abs() < window)")],
    "not_scaled": [("q, k, v = query.to(acc) / math.sqrt(d_k),", "q, k, v = query.to(acc),")],
    # the sourced kinds (their mutant files name where real code made them)
    "window_skipped_when_decoding": [("    offset = L_k - L_q\n",
                                      "    offset = L_k - L_q\n    if offset:  # queries after a cache: no window\n        window = L_k\n")],
    "window_start_from_query_index": [("lo = max(c + offset - window + 1, 0)",
                                       "lo = max(c - window + 1, 0) if causal else max(c + offset - window + 1, 0)"),
                                      ("ok = ((rel >= 0) & (rel < window)) if causal",
                                       "ok = ((rel >= 0) & (rel - offset < window)) if causal")],
    "mask_multiplied": [("            ok = ok & (m[:, :, c:c + n, lo:hi] != 0)\n", "            pass  # the mask multiplies the scores below\n"),
                        ('        s = (q[:, :, c:c + n] @ k[:, :, lo:hi].transpose(-1, -2)).masked_fill(~ok, float("-inf"))',
                         "        s = q[:, :, c:c + n] @ k[:, :, lo:hi].transpose(-1, -2)\n"
                         "        if m is not None:\n            s = s * m[:, :, c:c + n, lo:hi].to(acc)\n"
                         '        s = s.masked_fill(~ok, float("-inf"))')],
}


@pytest.mark.parametrize("name", sorted(CHUNK_EDITS))
def test_a_bank_mistake_in_the_chunked_style_is_named_by_replay(name, tmp_path):
    source = (SAMPLES / "correct_chunked_blocks.py").read_text(encoding="utf-8")
    for old, new in CHUNK_EDITS[name]:
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    assert_named_as(get_exercise(EX), source, name, tmp_path)


# Known gap, kept visible: the chunked style with no window on unmasked calls is named by its values
# (window_skipped_without_mask), but its FLOPs series happens to lie within 5% of full_scores' (50.9M
# against 51.4M at L = 512), and the cost replay has no counterpart of the value replay's
# ``diagnosis.contradicted`` (full_scores gets right the value cases this candidate fails), so
# flops_scaling is named full_scores: a wrong cause. Strict, so that fixing the cost replay flips it.
def test_window_skipped_without_mask_in_the_chunked_style_is_named_by_replay(tmp_path):
    """Its FLOPs lie within 5% of full_scores' (dense work either way), but full_scores gets right the
    values this file gets wrong: the cost replay does not name it (grade._cost_contradicted)."""
    source = (SAMPLES / "correct_chunked_blocks.py").read_text(encoding="utf-8")
    old = "    offset = L_k - L_q\n"
    assert source.count(old) == 1
    source = source.replace(old, old + "    if mask is None:  # no mask: no window\n        window = L_k\n")
    assert_named_as(get_exercise(EX), source, "window_skipped_without_mask", tmp_path)


def test_nan_only_on_rows_that_see_no_key_is_named_and_elsewhere_is_not():
    plan = checks.build_plan(1, 1)
    step = next(s for s in plan.steps if s.check == "fully_masked_rows")
    from grader.judge.judges import JudgeContext  # noqa: PLC0415

    ctx = JudgeContext(step=step, plan=plan, got=None, expected=None, golden=None)
    call = checks._call(ctx)
    keep = np.broadcast_to(checks._keep(call).any(-1), (2, 2, 12))            # (B, H, L_q)
    got = np.zeros((2, 2, 12, 8))
    got[~keep] = np.nan
    assert checks.diagnose(ctx, got, None) == checks.NAN_EMPTY_ROWS
    got[0, 0, 7] = np.nan                                                     # a row that sees keys
    assert checks.diagnose(ctx, got, None) is None


@pytest.mark.parametrize("track", ["numpy", "torch"])
def test_hidden_cases_hold_the_same_kinds_at_every_seed(track):
    """At every seed the hidden cases hold causal and non-causal calls, L_q < L_k, lengths that are not
    multiples of the window, padding and numeric 0/3 and 0/0.5/-2 masks: a mistake in any of these is
    charged at every seed, never by the luck of the draw."""
    for seed in range(1, 21):
        plan = checks.build_plan(1, seed, track=track)
        kinds = set()
        for s in plan.steps:
            if s.check not in ("hidden_values", "hidden_masks"):
                continue
            arrays = [plan.arrays[a.get("array") or a["tensor"]] for a in s.wire["args"][:3]]
            window, causal = (a["value"] for a in s.wire["args"][3:5])
            L_q, L_k = arrays[0].shape[2], arrays[1].shape[2]
            assert L_k % window != 0 and window < L_k, (seed, L_k, window)
            kinds.add(("causal" if causal else "not", "<" if L_q < L_k else "=="))
            if len(s.wire["args"]) > 5:
                m = plan.arrays[s.wire["args"][5].get("array") or s.wire["args"][5]["tensor"]]
                kinds.add("mask " + "/".join(f"{x:g}" for x in sorted({float(x) for x in np.unique(m)})))
        assert kinds >= {("causal", "<"), ("causal", "=="), ("not", "<"), ("not", "=="),
                         "mask 0/1", "mask 0/3", "mask -2/0/0.5"}, (seed, kinds)
