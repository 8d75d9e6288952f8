"""Tests for the `kv_cache` exercise: the reference against full causal attention written here from
scratch, and the grader's verdicts and messages on known-correct and known-wrong solutions."""

from __future__ import annotations

import importlib.util
import math

import numpy as np
import pytest

from grader.grading.exercise import get_exercise, project_root
from grader.grading.grade import grade_submission
from mutant_helpers import assert_named_as, mutant_file

SAMPLES = project_root() / "submissions" / "samples" / "kv_cache"


@pytest.fixture(scope="module")
def ref():
    path = project_root() / "reference" / "kv_cache.py"
    spec = importlib.util.spec_from_file_location("ref_kv_cache", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def exercise():
    return get_exercise("kv_cache")


def full_causal_attention(x, W_q, W_k, W_v, W_o, H):
    """Causal multi-head self-attention over the whole sequence, one (batch, head, query) at a time."""
    B, L, D = x.shape
    d = D // H
    q, k, v = x @ W_q, x @ W_k, x @ W_v
    merged = np.zeros((B, L, D))
    for b in range(B):
        for h in range(H):
            cols = slice(h * d, (h + 1) * d)
            for i in range(L):
                s = np.array([q[b, i, cols] @ k[b, j, cols] / math.sqrt(d) for j in range(i + 1)])
                w = np.exp(s - s.max())
                w /= w.sum()
                merged[b, i, cols] = sum(w[j] * v[b, j, cols] for j in range(i + 1))
    return merged @ W_o


def weights(rng, D):
    return [rng.standard_normal((D, D)) / math.sqrt(D) for _ in range(4)]


def run_chunks(attn, x, W, chunks, use_cache=True):
    outs, start = [], 0
    for n in chunks:
        outs.append(attn.forward(x[:, start:start + n], *W, use_cache=use_cache))
        start += n
    return np.concatenate(outs, axis=1)


@pytest.mark.parametrize("chunks", [[5, 1, 1, 1, 1], [3, 1, 4, 1, 5], [1] * 6, [7]])
def test_reference_equals_full_causal_attention(ref, chunks):
    rng = np.random.default_rng(sum(chunks))
    B, D, H = 2, 12, 3
    x = rng.standard_normal((B, sum(chunks), D))
    W = weights(rng, D)
    attn = ref.CachedAttention(D, H)
    got = run_chunks(attn, x, W, chunks)
    np.testing.assert_allclose(got, full_causal_attention(x, *W, H), rtol=1e-10, atol=1e-12)
    assert attn.k_cache.shape == attn.v_cache.shape == (B, H, sum(chunks), D // H)


def test_reference_use_cache_false_and_clear(ref):
    rng = np.random.default_rng(3)
    B, D, H = 1, 8, 2
    W = weights(rng, D)
    attn = ref.CachedAttention(D, H)
    assert attn.k_cache is None and attn.v_cache is None
    first = rng.standard_normal((B, 4, D))
    attn.forward(first, *W)
    k_before, v_before = attn.k_cache.copy(), attn.v_cache.copy()
    other = rng.standard_normal((B, 3, D))
    np.testing.assert_allclose(attn.forward(other, *W, use_cache=False), full_causal_attention(other, *W, H),
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(attn.k_cache, k_before)
    np.testing.assert_array_equal(attn.v_cache, v_before)
    attn.clear_cache()
    assert attn.k_cache is None and attn.v_cache is None
    np.testing.assert_allclose(attn.forward(other, *W), full_causal_attention(other, *W, H), rtol=1e-10, atol=1e-12)


def test_reference_keeps_float32(ref):
    rng = np.random.default_rng(4)
    W = [w.astype(np.float32) for w in weights(rng, 8)]
    attn = ref.CachedAttention(8, 2)
    out = attn.forward(rng.standard_normal((1, 3, 8)).astype(np.float32), *W)
    assert out.dtype == np.float32 and attn.k_cache.dtype == np.float32


def test_reference_gets_full_marks(exercise):
    card = grade_submission(exercise, exercise.reference_path, sandbox="process", seed=5)
    assert card.status == "graded" and card.score == card.max_score


def test_unseen_style_dict_cache_empty_arrays_gets_full_marks(exercise, tmp_path):
    """A style no sample has: per-token decode loop, cache cleared to T = 0 arrays, softmax via logsumexp."""
    src = tmp_path / "tokenwise.py"
    src.write_text('''
import numpy as np

class CachedAttention:
    def __init__(self, d_model, num_heads):
        self.H, self.D = num_heads, d_model
        self.k_cache = None
        self.v_cache = None

    def clear_cache(self):
        if self.k_cache is not None:
            self.k_cache = self.k_cache[:, :, :0]
            self.v_cache = self.v_cache[:, :, :0]

    def forward(self, x, W_q, W_k, W_v, W_o, use_cache=True):
        B, L, D = x.shape
        H, d = self.H, D // self.H
        heads = lambda t: np.stack([t[..., h * d:(h + 1) * d] for h in range(H)], axis=1)  # (B, H, L, d)
        q, k, v = heads(x @ W_q), heads(x @ W_k), heads(x @ W_v)
        past_k = self.k_cache if (use_cache and self.k_cache is not None) else np.zeros((B, H, 0, d), x.dtype)
        past_v = self.v_cache if (use_cache and self.v_cache is not None) else np.zeros((B, H, 0, d), x.dtype)
        outs = []
        for i in range(L):                       # token by token, each sees the past and itself
            past_k = np.concatenate([past_k, k[:, :, i:i + 1]], axis=2)
            past_v = np.concatenate([past_v, v[:, :, i:i + 1]], axis=2)
            s = (q[:, :, i:i + 1] @ np.swapaxes(past_k, 2, 3)) / np.sqrt(np.asarray(d, x.dtype))
            lse = np.log(np.exp(s - s.max(-1, keepdims=True)).sum(-1, keepdims=True)) + s.max(-1, keepdims=True)
            outs.append(np.exp(s - lse) @ past_v)
        if use_cache:
            self.k_cache, self.v_cache = past_k, past_v
        y = np.concatenate(outs, axis=2)         # (B, H, L, d)
        y = np.concatenate([y[:, h] for h in range(H)], axis=-1)
        return y @ W_o
''')
    card = grade_submission(exercise, src, sandbox="process", seed=6)
    failed = {c.id: c.message for c in card.checks if c.verdict != "passed"}
    assert card.score == card.max_score, failed


def test_missing_prefill_mask_is_named(exercise, tmp_path):
    card = grade_submission(exercise, mutant_file("kv_cache", "no_causal_mask", tmp_path), sandbox="process", seed=5)
    checks = {c.id: c for c in card.checks}
    assert checks["prefill_decode"].verdict == "failed"
    assert "no causal mask inside a multi-token prefill" in checks["prefill_decode"].message
    assert checks["prefill_decode"].details["mistake"] == "no_causal_mask"    # named by the bank's replay
    assert checks["prefill_decode"].details["cases_passed"] == 6     # every single-token decode step is right
    assert checks["cache_shapes"].verdict == "passed"


def test_use_cache_false_that_appends_fails_state_check_only(exercise, tmp_path):
    card = grade_submission(exercise, mutant_file("kv_cache", "no_cache_call_appends", tmp_path), sandbox="process",
                            seed=5)
    failed = {c.id for c in card.checks if c.verdict != "passed"}
    assert failed == {"no_cache_state"}


# One-line mistakes written into a correct sample of another style (einsum scores, np.tril mask, in-place
# softmax) than the bank's mutants (the reference's matmul and np.where): replay must still name them.
CONCAT = "correct_concat.py"
_MISTAKES_IN_ANOTHER_STYLE = {
    # computed in float32 by other ops than the mutant's: the two agree only to float32 rounding, so the
    # float64 case names the mistake only because both results are compared at float32's floor; the
    # hidden float64 sequence is judged at float32 tolerance (only `float64` demands float64 accuracy)
    "computed_in_float32": ([("        B, L, D = x.shape\n        q, k, v",
                              "        x, W_q, W_k, W_v, W_o = (a.astype(np.float32) for a in (x, W_q, W_k, W_v, W_o))\n"
                              "        B, L, D = x.shape\n        q, k, v")],
                            {"float64": "failed", "dtype_preserved": "failed", "hidden_sequences": "passed"}),
    # the next sequence's values are appended to stale ones: forward raises, and the errored check is
    # named because the mutant raises the same exception type on the same case and passes the others
    "clear_cache_keeps_values": ([("                k = np.concatenate((self.k_cache, k), axis=2)\n",
                                   "                k = np.concatenate((self.k_cache, k), axis=2)\n"
                                   "            if self.v_cache is not None:\n"),
                                  ("        self.k_cache = self.v_cache = None\n", "        self.k_cache = None\n")],
                                 {"clear_cache": "error"}),
    "cache_written_never_read": ([("            self.k_cache, self.v_cache = k, v\n",
                                   "            self.k_cache, self.v_cache = k, v\n"
                                   "            k, v = k[:, :, -L:], v[:, :, -L:]\n")],
                                 {"prefill_decode": "failed", "chunked_prefill": "failed"}),
    "no_output_projection": ([("        return out @ W_o\n", "        return out\n")],
                             {"prefill_decode": "failed", "no_cache_output": "failed"}),
    # these two leave the same cache, so no_cache_state's cases alone cannot tell them apart: the
    # tie-break names the one that is the candidate on every case of the plan (diagnosis.narrowed)
    "no_cache_call_appends": ([("        if use_cache:\n",
                                "        if not use_cache:\n"
                                "            self.k_cache = k if self.k_cache is None else np.concatenate((self.k_cache, k), 2)\n"
                                "            self.v_cache = v if self.v_cache is None else np.concatenate((self.v_cache, v), 2)\n"
                                "        if use_cache:\n")],
                              {"no_cache_state": "failed"}),
    "use_cache_ignored": ([("        if use_cache:\n", "        if True:\n")],
                          {"no_cache_output": "failed", "no_cache_state": "failed"}),
}


@pytest.mark.parametrize("name", sorted(_MISTAKES_IN_ANOTHER_STYLE))
def test_one_line_mistake_in_another_style_is_named_by_the_bank(exercise, tmp_path, name):
    edits, must = _MISTAKES_IN_ANOTHER_STYLE[name]
    src = (SAMPLES / CONCAT).read_text(encoding="utf-8")
    for old, new in edits:
        assert src.count(old) == 1, old
        src = src.replace(old, new)
    path = tmp_path / f"{name}_concat.py"
    path.write_text(src, encoding="utf-8")
    card = grade_submission(exercise, path, sandbox="process", seed=5)
    checks = {c.id: c for c in card.checks}
    for check, verdict in must.items():
        assert checks[check].verdict == verdict, (check, checks[check].message)
        if verdict != "passed":
            assert checks[check].details.get("mistake") == name, (check, checks[check].message)
    named = {c.details.get("mistake") for c in card.checks if c.details.get("mistake")}
    assert named == {name}          # no check blames another mistake


def test_recomputing_sample_is_numerically_right_but_fails_decode_complexity(exercise):
    """Its flaw is cost: every value check passes, and only `decode_complexity` fails, naming the mistake."""
    card = grade_submission(exercise, SAMPLES / "bug_recompute_kv.py", sandbox="process", seed=5)
    failed = {c.id: c for c in card.checks if c.verdict != "passed"}
    assert set(failed) == {"decode_complexity"}
    check = failed["decode_complexity"]
    assert "re-projected at every step" in check.message
    assert check.details["ratio_slope"] > check.details["max_ratio_slope"]


def test_x_overwritten_in_place_fails_inputs_unchanged_alone(exercise, ref):
    """Right outputs and caches, but the caller's x is overwritten with its query projection: only
    inputs_unchanged (the conventions: inputs are never modified in place) fails."""
    path = SAMPLES / "bug_x_overwritten_in_place.py"
    spec = importlib.util.spec_from_file_location("bug_x_in_place", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((1, 3, 8))
    W = [rng.standard_normal((8, 8)) for _ in range(4)]
    original = x.copy()
    got = module.CachedAttention(8, 2).forward(x, *W)
    np.testing.assert_allclose(got, full_causal_attention(original, *W, 2), rtol=1e-10, atol=1e-12)
    assert not np.array_equal(x, original)                        # the mistake, by hand
    card = grade_submission(exercise, path, sandbox="process", seed=5)
    failed = {c.id for c in card.checks if c.verdict != "passed"}
    assert failed == {"inputs_unchanged"}
    check = next(c for c in card.checks if c.id == "inputs_unchanged")
    assert "Modified its input in place: x" in check.message


def _load_sample(path):
    spec = importlib.util.spec_from_file_location(f"kv_sample_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_torch_recomputing_kv_fails_decode_complexity_only_not_gradients():
    """One mistake, one deduction (issue 15): recomputing the cached tokens' K/V with the decode call's
    weights gives the right values, and makes the gradients of that call's W_k/W_v include the cached
    tokens (the contract's cache is filled without gradients, constants). Recomputing is
    decode_complexity's mistake; the gradient cases after a filled cache compare x, W_q and W_o, on
    which the two agree, so `gradients` passes it, while a detached new key/value still fails there."""
    import torch  # noqa: PLC0415

    torch_samples = SAMPLES / "torch"
    recompute = _load_sample(torch_samples / "bug_recompute_kv.py").CachedAttention(16, 4)
    cached = _load_sample(torch_samples / "correct_cat.py").CachedAttention(16, 4)
    gen = torch.Generator().manual_seed(0)
    W0 = [torch.randn(16, 16, generator=gen, dtype=torch.float64) / 4 for _ in range(4)]
    prefill, new = torch.randn(2, 4, 16, generator=gen, dtype=torch.float64), torch.randn(2, 1, 16, generator=gen, dtype=torch.float64)
    grads = {}
    for name, attn in (("recompute", recompute), ("cached", cached)):
        attn.forward(prefill, *W0)                                  # cache filled without gradients
        x, W = new.clone().requires_grad_(True), [w.clone().requires_grad_(True) for w in W0]
        out = attn.forward(x, *W)
        out.backward(torch.ones_like(out))
        grads[name] = {"out": out.detach(), "x": x.grad, "W_q": W[0].grad, "W_k": W[1].grad, "W_o": W[3].grad}
    torch.testing.assert_close(grads["recompute"]["out"], grads["cached"]["out"])
    for label in ("x", "W_q", "W_o"):
        torch.testing.assert_close(grads["recompute"][label], grads["cached"][label])
    assert not torch.allclose(grads["recompute"]["W_k"], grads["cached"]["W_k"])   # the cached tokens' share

    exercise = get_exercise("kv_cache", track="torch")
    for sample, check in (("bug_recompute_kv.py", "decode_complexity"), ("bug_detached_kv.py", "gradients")):
        card = grade_submission(exercise, torch_samples / sample, sandbox="process", seed=5)
        assert {c.id for c in card.checks if c.verdict != "passed"} == {check}, sample


FUSED = SAMPLES / "torch" / "correct_kv_fused_proj.py"
STORE = "            self.k_cache, self.v_cache = k, v\n"


@pytest.mark.parametrize("name, old, new", [
    ("cache_keeps_last_32", STORE, "            self.k_cache, self.v_cache = k[..., -32:, :], v[..., -32:, :]\n"),
    ("attends_within_last_32", STORE,
     "            w = max(32, L)\n            k, v = k[..., -w:, :], v[..., -w:, :]\n" + STORE),
    ("cache_keeps_batch_row_0", "k, v = torch.cat([self.k_cache, k], 2), torch.cat([self.v_cache, v], 2)\n" + STORE,
     "k, v = torch.cat([self.k_cache.expand(B, -1, -1, -1), k], 2), torch.cat([self.v_cache.expand(B, -1, -1, -1), v], 2)\n"
     "            self.k_cache, self.v_cache = k[:1].clone(), v[:1].clone()\n"),
    ("clear_cache_keeps_values", "    def clear_cache(self):\n        self.k_cache = self.v_cache = None\n",
     "    def clear_cache(self):\n        self.k_cache = None  # the value cache is forgotten\n"),
])
def test_torch_cache_window_batch_and_clear_mistakes_are_named_in_another_style(name, old, new, tmp_path):
    """The torch bank's sliding-window, batch-row-0 and clear-keys-only mistakes (one-line edits of the
    reference) name the same mistakes written into the fused-projection correct sample; before they
    were in the torch bank, the samples with these mistakes failed with no name."""
    source = FUSED.read_text()
    assert old in source
    source = source.replace(old, new)
    if name == "clear_cache_keeps_values":  # the stale values must not break the attention itself
        source = source.replace("k, v = torch.cat([self.k_cache, k], 2), torch.cat([self.v_cache, v], 2)",
                                "k = torch.cat([self.k_cache, k], 2)\n"
                                "            if self.v_cache is not None:\n"
                                "                v = torch.cat([self.v_cache, v], 2)")
        source = source.replace("torch.matmul(torch.softmax(s, -1), v)", "torch.matmul(torch.softmax(s, -1), v[..., -S:, :])")
    assert_named_as(get_exercise("kv_cache", track="torch"), source, name, tmp_path)
