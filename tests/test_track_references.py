"""The second-track references against code nobody here wrote: torch.nn.MultiheadAttention,
F.scaled_dot_product_attention (with repeat_interleave for GQA, is_causal for the cache) and
torch.tril, in float64; gradients against torch.autograd through those oracles."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parent.parent
f64 = torch.float64


def _load(name):
    spec = importlib.util.spec_from_file_location(f"track_reference_{name}", ROOT / "reference" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _gen(seed):
    return torch.Generator().manual_seed(seed)


# -- attention_scores, PyTorch track ---------------------------------------------------------------

@pytest.mark.parametrize("mask_kind", [None, "causal", "padding", "numeric"])
def test_attention_scores_torch_matches_sdpa_values_and_gradients(mask_kind):
    ref = _load("attention_scores_torch")
    g = _gen(3)
    q = torch.randn(2, 3, 5, 8, generator=g, dtype=f64, requires_grad=True)
    k = torch.randn(2, 3, 7, 8, generator=g, dtype=f64, requires_grad=True)
    v = torch.randn(2, 3, 7, 4, generator=g, dtype=f64, requires_grad=True)
    keep = None
    if mask_kind == "causal":
        keep = torch.ones(5, 7, dtype=torch.bool).tril(2)
    elif mask_kind in ("padding", "numeric"):
        keep = torch.ones(2, 1, 1, 7, dtype=torch.bool)
        keep[1, ..., 4:] = False
    mask = keep.to(f64) if mask_kind == "numeric" else keep
    out, weights = ref.scaled_dot_product_attention(q, k, v, mask)
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=keep)
    torch.testing.assert_close(out, expected, rtol=1e-10, atol=1e-10)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 3, 5, dtype=f64))
    up = torch.randn(out.shape, generator=g, dtype=f64)
    ours = torch.autograd.grad(out, (q, k, v), up)
    theirs = torch.autograd.grad(expected, (q, k, v), up)
    for a, b in zip(ours, theirs):
        torch.testing.assert_close(a, b, rtol=1e-9, atol=1e-10)


def test_attention_scores_torch_fully_masked_row_is_zero_with_finite_gradients():
    ref = _load("attention_scores_torch")
    q = torch.randn(1, 4, 8, dtype=f64, requires_grad=True)
    k = torch.randn(1, 4, 8, dtype=f64, requires_grad=True)
    v = torch.randn(1, 4, 8, dtype=f64, requires_grad=True)
    keep = torch.ones(4, 4, dtype=torch.bool).tril()
    keep[2] = False
    out, w = ref.scaled_dot_product_attention(q, k, v, keep)
    assert torch.equal(out[0, 2], torch.zeros(8, dtype=f64)) and torch.equal(w[0, 2], torch.zeros(4, dtype=f64))
    out.sum().backward()
    assert all(torch.isfinite(t.grad).all() for t in (q, k, v))
    rows = [0, 1, 3]  # the other rows agree with SDPA on those rows alone
    expected = F.scaled_dot_product_attention(q[:, rows], k, v, attn_mask=keep[rows])
    torch.testing.assert_close(out[:, rows], expected, rtol=1e-10, atol=1e-10)


# -- mha and gqa, NumPy track ----------------------------------------------------------------------

@pytest.mark.parametrize("B,L_q,L_k,D,H,masked", [(2, 5, 5, 16, 4, None), (3, 4, 7, 12, 3, "padding"),
                                                  (1, 6, 6, 10, 5, "causal")])
def test_mha_numpy_matches_nn_multihead_attention(B, L_q, L_k, D, H, masked):
    ref = _load("mha_numpy")
    g = _gen(B * 100 + D)
    q, k, v = (torch.randn(B, L, D, generator=g, dtype=f64) for L in (L_q, L_k, L_k))
    W = [torch.randn(D, D, generator=g, dtype=f64) / D ** 0.5 for _ in range(4)]
    oracle = torch.nn.MultiheadAttention(D, H, bias=False, batch_first=True, dtype=f64)
    with torch.no_grad():  # nn.Linear computes x @ W^T: load right-multiplied weights transposed
        oracle.in_proj_weight.copy_(torch.cat([W[0].T, W[1].T, W[2].T]))
        oracle.out_proj.weight.copy_(W[3].T)
    keep, kwargs = None, {}
    if masked == "padding":
        keep = torch.ones(B, 1, 1, L_k, dtype=torch.bool)
        keep[0, ..., -2:] = False
        kwargs["key_padding_mask"] = ~keep[:, 0, 0, :]
    elif masked == "causal":
        keep = torch.ones(L_q, L_k, dtype=torch.bool).tril()[None, None]
        kwargs["attn_mask"] = ~keep[0, 0]
    expected, _ = oracle(q, k, v, need_weights=False, **kwargs)
    got = ref.multi_head_attention(q.numpy(), k.numpy(), v.numpy(), H, *(w.numpy() for w in W),
                                   None if keep is None else keep.numpy())
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, expected.detach().numpy(), rtol=1e-10, atol=1e-10)
    got32 = ref.multi_head_attention(q.numpy().astype(np.float32), k.numpy().astype(np.float32),
                                     v.numpy().astype(np.float32), H, *(w.numpy().astype(np.float32) for w in W),
                                     None if keep is None else keep.numpy())
    assert got32.dtype == np.float32


@pytest.mark.parametrize("B,L,D,H_q,H_kv,causal", [(2, 5, 16, 4, 2, False), (1, 6, 24, 6, 3, True),
                                                   (2, 4, 16, 8, 1, True)])
def test_gqa_numpy_matches_sdpa_with_repeat_interleave(B, L, D, H_q, H_kv, causal):
    ref = _load("gqa_numpy")
    g = _gen(B + 10 * D + H_kv)
    d_k = D // H_q
    x = torch.randn(B, L, D, generator=g, dtype=f64)
    W_q, W_o = (torch.randn(D, D, generator=g, dtype=f64) / D ** 0.5 for _ in range(2))
    W_k, W_v = (torch.randn(D, H_kv * d_k, generator=g, dtype=f64) / D ** 0.5 for _ in range(2))
    q = (x @ W_q).view(B, L, H_q, d_k).transpose(1, 2)
    k = (x @ W_k).view(B, L, H_kv, d_k).transpose(1, 2).repeat_interleave(H_q // H_kv, dim=1)
    v = (x @ W_v).view(B, L, H_kv, d_k).transpose(1, 2).repeat_interleave(H_q // H_kv, dim=1)
    y = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    expected = y.transpose(1, 2).reshape(B, L, D) @ W_o
    mask = np.tril(np.ones((L, L), dtype=bool)) if causal else None
    got = ref.grouped_query_attention(x.numpy(), W_q.numpy(), W_k.numpy(), W_v.numpy(), W_o.numpy(), H_q, H_kv, mask)
    np.testing.assert_allclose(got, expected.numpy(), rtol=1e-10, atol=1e-10)
    with pytest.raises(ValueError):
        ref.grouped_query_attention(x.numpy(), W_q.numpy(), W_k.numpy(), W_v.numpy(), W_o.numpy(), 4, 3)


# -- causal_mask, PyTorch track --------------------------------------------------------------------

@pytest.mark.parametrize("L,S", [(5, 5), (3, 8), (1, 1), (2, 40)])
def test_causal_mask_torch_is_the_bottom_right_triangle(L, S):
    ref = _load("causal_mask_torch")
    got = ref.create_causal_mask(L, S)
    assert got.dtype == torch.bool and tuple(got.shape) == (1, 1, L, S)
    assert torch.equal(got[0, 0], torch.ones(L, S, dtype=torch.bool).tril(S - L))
    with pytest.raises(ValueError):
        ref.create_causal_mask(4, 3)


def test_causal_mask_torch_padding_and_combined():
    ref = _load("causal_mask_torch")
    seq = torch.tensor([[5, 7, 0, 0], [0, 3, 3, 9]])
    pad = ref.create_padding_mask(seq)
    assert tuple(pad.shape) == (2, 1, 1, 4)
    assert pad[:, 0, 0].tolist() == [[True, True, False, False], [False, True, True, True]]
    combined = ref.create_combined_mask(seq, pad_token=3)
    expected = torch.ones(4, 4, dtype=torch.bool).tril() & (seq != 3)[:, None, :]
    assert torch.equal(combined[:, 0], expected)


# -- kv_cache, PyTorch track -----------------------------------------------------------------------

def test_kv_cache_torch_prefill_then_decode_matches_causal_sdpa_and_its_gradients():
    ref = _load("kv_cache_torch")
    g = _gen(11)
    B, L, D, H = 2, 9, 12, 3
    x = torch.randn(B, L, D, generator=g, dtype=f64)
    W = [(torch.randn(D, D, generator=g, dtype=f64) / D ** 0.5).requires_grad_(True) for _ in range(4)]

    def oracle(x_):
        split = lambda t: t.view(B, L, H, D // H).transpose(1, 2)  # noqa: E731
        y = F.scaled_dot_product_attention(split(x_ @ W[0]), split(x_ @ W[1]), split(x_ @ W[2]), is_causal=True)
        return y.transpose(1, 2).reshape(B, L, D) @ W[3]

    expected = oracle(x)
    att = ref.CachedAttention(D, H)
    pieces = [att.forward(x[:, a:b], *W) for a, b in ((0, 4), (4, 5), (5, 7), (7, 8), (8, 9))]
    torch.testing.assert_close(torch.cat(pieces, dim=1), expected, rtol=1e-10, atol=1e-10)
    assert tuple(att.k_cache.shape) == (B, H, L, D // H)
    up = torch.randn(expected.shape, generator=g, dtype=f64)
    ours = torch.autograd.grad(torch.cat(pieces, dim=1), W, up)
    theirs = torch.autograd.grad(expected, W, up)
    for a, b in zip(ours, theirs):
        torch.testing.assert_close(a, b, rtol=1e-9, atol=1e-10)
    before = att.k_cache.clone()
    alone = att.forward(x[:, :3], *W, use_cache=False)
    torch.testing.assert_close(alone, ref.CachedAttention(D, H).forward(x[:, :3], *W), rtol=0, atol=0)
    assert torch.equal(att.k_cache, before)
