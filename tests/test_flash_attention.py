"""The flash_attention exercise: the reference against torch's SDPA and a float64 softmax, the host's
float64 model of the mistakes, the probes, and every sample judged for the reason it names."""

import importlib.util
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from attention_helpers import ROOT, failed, judge_in_process, messages
from mutant_helpers import assert_named_as
from grader.grading.exercise import get_exercise
from grader.run.instruments import Measurement

SAMPLES = ROOT / "submissions" / "samples" / "flash_attention"


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ref = _load(ROOT / "reference" / "flash_attention.py", "test_reference_flash")
checks = get_exercise("flash_attention").checks_module


def _qkv(B, H, L_q, L_k, d, seed, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(B, H, L_q, d, generator=g, dtype=dtype), torch.randn(B, H, L_k, d, generator=g, dtype=dtype),
            torch.randn(B, H, L_k, d, generator=g, dtype=dtype))


def _bottom_right(L_q, L_k):
    return torch.arange(L_k)[None, :] <= torch.arange(L_q)[:, None] + (L_k - L_q)


def _softmax64(q, k, v, causal):
    """Plain float64 attention by hand, rows that see no key set to 0."""
    q, k, v = (np.asarray(t, dtype=np.float64) for t in (q, k, v))
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    if causal:
        s = np.where(_bottom_right(q.shape[2], k.shape[2]).numpy(), s, -np.inf)
    out = np.zeros(q.shape[:-1] + (v.shape[-1],))
    for idx in np.ndindex(*s.shape[:-1]):
        row = s[idx]
        if np.isfinite(row).any():
            w = np.exp(row - row[np.isfinite(row)].max())
            out[idx] = (w / w.sum()) @ v[idx[:2]]
    return out


@pytest.mark.parametrize("L,block", [(16, 4), (13, 4), (9, 1), (7, 64), (130, 64)])
def test_reference_matches_sdpa_is_causal_and_not(L, block):
    q, k, v = _qkv(2, 3, L, L, 8, seed=L)
    for causal in (False, True):
        torch.testing.assert_close(ref.tiled_attention(q, k, v, block, causal),
                                   F.scaled_dot_product_attention(q, k, v, is_causal=causal), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("L_q,L_k,block", [(5, 17, 4), (1, 21, 4), (19, 6, 4), (14, 6, 3)])
def test_reference_matches_sdpa_with_bottom_right_mask(L_q, L_k, block):
    q, k, v = _qkv(2, 2, L_q, L_k, 8, seed=L_q * L_k)
    want = torch.nan_to_num(F.scaled_dot_product_attention(q, k, v, attn_mask=_bottom_right(L_q, L_k)))
    got = ref.tiled_attention(q, k, v, block, True)
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got.numpy(), _softmax64(q, k, v, True), rtol=1e-12, atol=1e-12)
    if L_q > L_k:  # the first rows see nothing: exactly 0
        assert torch.equal(got[:, :, :L_q - L_k], torch.zeros_like(got[:, :, :L_q - L_k]))


def test_reference_is_stable_at_large_scores_and_keeps_dtype():
    q, k, v = _qkv(1, 2, 12, 12, 8, seed=1)
    q, k = q * 30, k * 30
    np.testing.assert_allclose(ref.tiled_attention(q, k, v, 4, True).numpy(), _softmax64(q, k, v, True),
                               rtol=1e-10, atol=1e-10)
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        assert ref.tiled_attention(q.to(dtype), k.to(dtype), v.to(dtype), 4).dtype == dtype


def test_reference_gradients_match_sdpa():
    q, k, v = (t.requires_grad_(True) for t in _qkv(1, 2, 9, 11, 8, seed=4))
    g = torch.randn(1, 2, 9, 8, dtype=torch.float64)
    mask = _bottom_right(9, 11)
    ours = torch.autograd.grad(ref.tiled_attention(q, k, v, 4, True), (q, k, v), g)
    theirs = torch.autograd.grad(F.scaled_dot_product_attention(q, k, v, attn_mask=mask), (q, k, v), g)
    for a, b in zip(ours, theirs):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("block_size", [0, -3, 2.0, True])
def test_reference_rejects_bad_block_size(block_size):
    q, k, v = _qkv(1, 1, 3, 3, 4, seed=0)
    with pytest.raises(ValueError, match="block_size"):
        ref.tiled_attention(q, k, v, block_size)


@pytest.mark.parametrize("causal", [False, True])
def test_host_model_is_right_and_each_mistake_changes_it(causal):
    q, k, v = _qkv(1, 2, 16, 16, 8, seed=9)
    k = k + 3 * torch.linspace(0, 1, 16)[:, None] * torch.sign(q.mean(dim=2, keepdim=True))  # rising max
    want = _softmax64(q, k, v, causal)
    np.testing.assert_allclose(checks.tiled64(q, k, v, 4, causal), want, rtol=1e-12, atol=1e-12)
    for mistake, _sentence in checks.MISTAKES:
        if mistake == "causal_block_short" and not causal:
            continue
        assert np.abs(checks.tiled64(q, k, v, 4, causal, mistake) - want).max() > 1e-2, mistake


def test_memory_probe_separates_a_full_score_matrix_from_tiles():
    """Peak live-tensor bytes at the probe's sizes: the reference grows like L, q @ k^T like L^2."""
    full = _load(SAMPLES / "bug_full_score_matrix.py", "test_full_matrix")
    sizes = get_exercise("flash_attention").probes[0].sizes
    ratios = []
    for L in sizes:
        q = torch.randn(1, 2, L, 16)
        peaks = []
        for module in (ref, full):
            with Measurement(["peak_bytes"], uses_torch=True) as m:
                module.tiled_attention(q, q, q, 64, True)
            peaks.append(m.report["peak_bytes"])
        assert peaks[0] < 64 * L * 2 * 4 * 8  # a few (L, block) float32 temporaries per head
        ratios.append(peaks[1] / peaks[0])
    slope = np.polyfit(np.log(sizes), np.log(ratios), 1)[0]
    assert slope > 0.7 and ratios[-1] > 4.0, (ratios, slope)


# The one-line bug samples that repeated one query-tiled base are mutants of the bank now; their edits
# live on here, written into that base (correct_query_tiles.py), and keep the phrases of the checks'
# own messages; replay must name each one in that style too (the bank's mutants loop over all queries
# at once, so this is another style for them).
STYLE_EDITS = {
    "sum_not_rescaled": [("l = alpha * l + p.sum(-1, keepdim=True)", "l = l + p.sum(-1, keepdim=True)")],
    "output_not_rescaled": [("acc = alpha * acc + p @ v", "acc = acc + p @ v")],
    "early_division": [("acc = alpha * acc + p @ v[:, :, ks:ks + block_size]\n",
                        "acc = alpha * acc + p @ v[:, :, ks:ks + block_size]\n"
                        "            acc = acc / l.clamp_min(torch.finfo(l.dtype).tiny)\n"),
                       ("outs.append(torch.where(l > 0, acc / torch.where(l > 0, l, torch.ones_like(l)), "
                        "torch.zeros_like(acc)))", "outs.append(acc)")],
    "no_value_error": [("    if not isinstance(block_size, int) or block_size < 1:\n"
                        "        raise ValueError(\"block_size must be an integer >= 1\")\n",
                        "    block_size = abs(block_size) or 1\n")],
    "causal_block_short": [("for kb in range(max(n_blocks, 0)):",
                            "for kb in range(max(n_blocks - 1 if causal else n_blocks, 0)):")],
    "running_max_init_zero": [("m = torch.full((B, H, n, 1), -math.inf, dtype=q.dtype)",
                               "m = torch.zeros((B, H, n, 1), dtype=q.dtype)")],
    "causal_top_left": [("last = qs + n - 1 + L_k - L_q", "last = qs + n - 1"),
                        ("torch.arange(qs, qs + n)[:, None] + (L_k - L_q)", "torch.arange(qs, qs + n)[:, None]")],
}


def _styled(name: str) -> str:
    source = (SAMPLES / "correct_query_tiles.py").read_text(encoding="utf-8")
    for old, new in STYLE_EDITS[name]:
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    return source


@pytest.mark.parametrize("sample,check,phrase", [
    ("mistake:sum_not_rescaled", "values", "running max was not used to rescale the running sum"),
    ("mistake:output_not_rescaled", "values", "previous output was not rescaled"),
    ("mistake:causal_block_short", "causal", "stops one block early"),
    ("mistake:early_division", "values", "divided by the running sum before all key blocks"),
    ("mistake:no_value_error", "bad_block_size", "Expected ValueError"),
    ("mistake:causal_top_left", "causal_bottom_right", "Mismatched"),
    ("mistake:running_max_init_zero", "large_scores", "Mismatched"),
    ("bug_full_score_matrix.py", "memory_scaling", "score matrix"),
])
def test_wrong_sample_fails_its_check_with_the_named_mistake(sample, check, phrase, tmp_path):
    """A bug sample, or (``mistake:NAME``) a bank mistake written into the query-tiled style."""
    path = SAMPLES / sample
    if sample.startswith("mistake:"):
        path = tmp_path / f"styled_{sample[8:]}.py"
        path.write_text(_styled(sample[8:]), encoding="utf-8")
    outcomes = judge_in_process("flash_attention", path)
    assert check in failed(outcomes)
    assert phrase in messages(outcomes, check)


@pytest.mark.parametrize("name", sorted(STYLE_EDITS))
def test_a_bank_mistake_written_into_the_query_tiled_style_is_named_by_replay(name, tmp_path):
    if name != "early_division":
        assert_named_as(get_exercise("flash_attention"), _styled(name), name, tmp_path)
        return
    # An early division in query tiles rounds like the bank's (key-block) mutant on a quarter of the
    # large-scores case's wrong entries only, under the half that 'shares a wrong value' asks
    # (diagnosis.SHARED_WRONG_FRACTION: positions counted from the first one share a quarter with
    # positions restarted at 0 and are not that mistake). The bank names nothing then, and the
    # hand-written replay of checks.py (the same division, in float64 on each case) still says it.
    path = tmp_path / "styled_early_division.py"
    path.write_text(_styled(name), encoding="utf-8")
    from grader.grading.grade import _MEASURE_LOCK, grade_submission  # noqa: PLC0415
    from grader.grading.trusted import TrustedInProcess  # noqa: PLC0415
    card = grade_submission(get_exercise("flash_attention"), path, seed=5,
                            trusted_runner=TrustedInProcess(path.name, _MEASURE_LOCK))
    named = {c.details.get("mistake") for c in card.checks if c.details.get("mistake")}
    assert named <= {name}, named
    values = next(c for c in card.checks if c.id == "values")
    assert values.message.startswith("Likely mistake: the output was divided by the running sum before all key")


@pytest.mark.slow
def test_correct_styles_pass_every_check_in_process():
    for path in sorted(SAMPLES.glob("correct_*.py")):
        assert failed(judge_in_process("flash_attention", path)) == set(), path.name


@pytest.mark.parametrize("L_q,L_k,block,causal", [(16, 16, 4, False), (13, 13, 4, True), (5, 17, 4, True),
                                                   (19, 6, 4, True), (7, 9, 64, False)])
def test_numpy_track_reference_matches_sdpa(L_q, L_k, block, causal):
    ref_np = _load(ROOT / "reference" / "flash_attention_numpy.py", "test_reference_flash_np")
    q, k, v = _qkv(2, 2, L_q, L_k, 8, seed=L_q + L_k)
    mask = _bottom_right(L_q, L_k) if causal else None
    want = torch.nan_to_num(F.scaled_dot_product_attention(q, k, v, attn_mask=mask)).numpy()
    got = ref_np.tiled_attention(q.numpy(), k.numpy(), v.numpy(), block, causal)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert ref_np.tiled_attention(q.numpy().astype(np.float16), k.numpy().astype(np.float16),
                                  v.numpy().astype(np.float16), block, causal).dtype == np.float16
    with pytest.raises(ValueError, match="block_size"):
        ref_np.tiled_attention(q.numpy(), k.numpy(), v.numpy(), 0)


@pytest.mark.slow
def test_a_slow_row_by_row_solution_gets_full_marks_in_the_sandbox():
    """A correct solution that loops over query rows in Python (about 1 s of CPU per memory-probe
    step): full marks in the real sandbox, because step limits count CPU time, not waiting. Kept
    out of submissions/samples/ (selfcheck grades samples at several seeds and the noise test twice
    more, minutes each for this file)."""
    from grader.grading.grade import grade_submission  # noqa: PLC0415

    card = grade_submission(get_exercise("flash_attention"), ROOT / "tests" / "data" / "flash_row_loop_detached_max.py",
                            sandbox="process", seed=7)
    assert card.status == "graded"
    assert [(c.id, c.verdict) for c in card.checks if c.verdict != "passed"] == []
    assert card.score == card.max_score


def test_nan_from_overflow_is_not_blamed_on_rows_that_see_no_key():
    from grader.grading.grade import grade_submission  # noqa: PLC0415

    """exp of unshifted scores in the hundreds overflows float32 (exp(89) > 3.4e38), so the sum is
    inf and inf / inf = NaN on rows that see every key: the NaN diagnosis names rows that see no key
    (causal with L_q > L_k), which would send the candidate after the wrong bug."""
    assert not np.isfinite(np.float32(np.exp(np.float32(100.0))))  # the overflow the sample hits
    outcomes = judge_in_process("flash_attention", SAMPLES / "bug_exp_without_max.py")
    assert failed(outcomes) == {"large_scores"}
    assert "NaN" in messages(outcomes, "large_scores")
    assert "sees no key" not in messages(outcomes, "large_scores")
    card = grade_submission(get_exercise("flash_attention"), SAMPLES / "bug_exp_without_max.py", sandbox="process",
                            seed=3)
    named = {c.id: c.details.get("mistake") for c in card.checks if c.details.get("mistake")}
    assert named == {"large_scores": "exp_without_max_shift"}
    assert "without subtracting the running max" in next(c.message for c in card.checks if c.id == "large_scores")


@pytest.mark.parametrize("L_q,L_k,causal,want", [
    (5, 3, True, [False, False, True, True, True]),   # row i sees keys j <= i - 2
    (3, 5, True, [True, True, True]),
    (4, 2, False, [True, True, True, True]),
])
def test_rows_that_see_a_key_follow_the_bottom_right_rule(L_q, L_k, causal, want):
    q, k = np.zeros((1, 1, L_q, 2)), np.zeros((1, 1, L_k, 2))
    visible = _bottom_right(L_q, L_k).any(dim=-1).tolist() if causal else [L_k > 0] * L_q
    assert visible == want
    assert checks._sees_a_key({"q": q, "k": k, "causal": causal}).tolist() == want


def test_nan_on_rows_that_see_no_key_is_named(tmp_path):
    """A solution dividing by a zero running sum: NaN exactly on the rows that see no key, named."""
    src = (SAMPLES / "correct_fa2_keys_only.py").read_text()
    path = tmp_path / "nan_rows.py"
    path.write_text(src + "\n\n_right = tiled_attention\n\n\ndef tiled_attention(q, k, v, block_size=64, causal=False):\n"
                    "    out = _right(q, k, v, block_size, causal)\n"
                    "    if causal and q.shape[-2] > k.shape[-2]:\n"
                    "        out = out.clone()\n"
                    "        out[..., : q.shape[-2] - k.shape[-2], :] = float('nan')\n"
                    "    return out\n")
    outcomes = judge_in_process("flash_attention", path)
    assert "causal_bottom_right" in failed(outcomes)
    assert "sees no key" in messages(outcomes, "causal_bottom_right")


@pytest.mark.parametrize("track", ["numpy", "torch"])
def test_hidden_cases_hold_the_same_shape_classes_at_every_seed(track):
    """Every seed's hidden cases hold causal calls with L_q < L_k, L_q == L_k and L_q > L_k (rows that
    see no key), and every hidden case has a ragged last key block: a mistake in any of these is
    charged at every seed (a NaN-for-empty-rows solution scored 18 or 16 of 20 by seed before)."""
    for seed in range(1, 31):
        plan = checks.build_plan(1, seed, track=track)
        steps = [s for s in plan.steps if s.check == "hidden_values"]
        kinds = set()
        for s in steps:
            q, k = (plan.arrays[a.get("array") or a["tensor"]] for a in s.wire["args"][:2])
            block, causal = (a["value"] for a in s.wire["args"][3:5])
            L_q, L_k = q.shape[2], k.shape[2]
            assert L_k % block != 0, (seed, L_k, block)
            if causal:
                kinds.add("<" if L_q < L_k else "==" if L_q == L_k else ">")
        assert kinds == {"<", "==", ">"}, (seed, kinds)


def test_large_scores_include_rows_whose_every_score_is_far_below_zero():
    """A running max started at 0 instead of -inf underflows there (exp of scores in the negative
    hundreds is 0 in float32, below about -745 in float64 too), so it is charged to large_scores
    whether the solution works in float32 or in float64."""
    plan = checks.build_plan(1, 1, track="numpy")
    lows = []
    for s in (s for s in plan.steps if s.check == "large_scores"):
        q, k = (plan.arrays[a["array"]] for a in s.wire["args"][:2])
        scores = q.astype(np.float64) @ np.swapaxes(k.astype(np.float64), -1, -2) / math.sqrt(q.shape[-1])
        lows.append((q.dtype, float(scores.max())))
    assert any(dt == np.float32 and top < -104 for dt, top in lows), lows
    assert any(dt == np.float64 and top < -746 for dt, top in lows), lows


@pytest.mark.parametrize("L_q,L_k,block,causal", [(16, 16, 4, False), (13, 13, 4, True), (5, 17, 4, True),
                                                   (19, 6, 4, True), (7, 9, 64, False)])
def test_numpy_logsumexp_baseline_matches_sdpa(L_q, L_k, block, causal):
    """The NumPy track's running-log-sum-exp baseline, which widens the float32 tolerance where every
    score is in the negative hundreds (a correct logaddexp solution failed large_scores there: 5.3e-5
    off, 3.6e-5 allowed), is itself right: SDPA's values, rows that see no key 0, the dtype kept."""
    base = _load(ROOT / "exercises" / "flash_attention" / "baselines_numpy" / "running_logsumexp.py", "test_flash_lse")
    q, k, v = _qkv(2, 2, L_q, L_k, 8, seed=L_q * L_k)
    mask = _bottom_right(L_q, L_k) if causal else None
    want = torch.nan_to_num(F.scaled_dot_product_attention(q, k, v, attn_mask=mask)).numpy()
    np.testing.assert_allclose(base.tiled_attention(q.numpy(), k.numpy(), v.numpy(), block, causal), want,
                               rtol=1e-12, atol=1e-12)
    assert base.tiled_attention(*(t.numpy().astype(np.float16) for t in (q, k, v)), block, causal).dtype == np.float16
    with pytest.raises(ValueError):
        base.tiled_attention(q.numpy(), k.numpy(), v.numpy(), 0, causal)
