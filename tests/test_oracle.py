"""External oracles: the mha and gqa references agree with code nobody here wrote
(torch.nn.MultiheadAttention and F.scaled_dot_product_attention) on random float64 cases."""

import importlib.util
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parent.parent


def _load(name):
    spec = importlib.util.spec_from_file_location(f"oracle_reference_{name}", ROOT / "reference" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


mha_ref = _load("mha")
gqa_ref = _load("gqa")
f64 = torch.float64


def _weights(gen, D, widths):
    return [torch.randn(D, w, generator=gen, dtype=f64) / D ** 0.5 for w in widths]


def _split(t, H):
    B, L, D = t.shape
    return t.view(B, L, H, D // H).transpose(1, 2)


@pytest.mark.parametrize("B,L_q,L_k,D,H,masked", [(2, 5, 5, 16, 4, None), (3, 4, 7, 12, 3, "padding"),
                                                  (1, 6, 6, 10, 5, "causal"), (2, 3, 3, 8, 1, "padding")])
def test_mha_matches_nn_multihead_attention(B, L_q, L_k, D, H, masked):
    gen = torch.Generator().manual_seed(B * 100 + D)
    q = torch.randn(B, L_q, D, generator=gen, dtype=f64)
    k = torch.randn(B, L_k, D, generator=gen, dtype=f64)
    v = torch.randn(B, L_k, D, generator=gen, dtype=f64)
    W_q, W_k, W_v, W_o = _weights(gen, D, [D] * 4)
    oracle = torch.nn.MultiheadAttention(D, H, bias=False, batch_first=True, dtype=f64)
    with torch.no_grad():  # nn.Linear computes x @ W^T: load our right-multiplied weights transposed
        oracle.in_proj_weight.copy_(torch.cat([W_q.T, W_k.T, W_v.T]))
        oracle.out_proj.weight.copy_(W_o.T)
    keep, kwargs = None, {}
    if masked == "padding":
        keep = torch.ones(B, 1, 1, L_k, dtype=torch.bool)
        keep[0, ..., -2:] = False
        kwargs["key_padding_mask"] = ~keep[:, 0, 0, :]  # nn.MHA: True = ignore
    elif masked == "causal":
        keep = torch.ones(L_q, L_k, dtype=torch.bool).tril()[None, None]
        kwargs["attn_mask"] = ~keep[0, 0]  # nn.MHA: True = not allowed
    expected, _ = oracle(q, k, v, need_weights=False, **kwargs)
    got = mha_ref.multi_head_attention(q, k, v, H, W_q, W_k, W_v, W_o, keep)
    torch.testing.assert_close(got, expected, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("B,L_q,L_k,D,H", [(2, 4, 6, 16, 4), (1, 7, 7, 18, 6), (3, 5, 5, 8, 8)])
def test_mha_matches_sdpa(B, L_q, L_k, D, H):
    gen = torch.Generator().manual_seed(L_q * 10 + L_k)
    q, k, v = (torch.randn(B, L, D, generator=gen, dtype=f64) for L in (L_q, L_k, L_k))
    W_q, W_k, W_v, W_o = _weights(gen, D, [D] * 4)
    keep = torch.rand(B, 1, L_q, L_k, generator=gen) > 0.3
    keep[..., 0] = True  # SDPA gives NaN for a fully masked row; the contract says 0 (tested in test_mha)
    y = F.scaled_dot_product_attention(_split(q @ W_q, H), _split(k @ W_k, H), _split(v @ W_v, H), attn_mask=keep)
    expected = y.transpose(1, 2).reshape(B, L_q, D) @ W_o
    got = mha_ref.multi_head_attention(q, k, v, H, W_q, W_k, W_v, W_o, keep)
    torch.testing.assert_close(got, expected, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("B,L,D,H_q,H_kv", [(2, 5, 16, 4, 2), (1, 6, 24, 6, 3), (2, 4, 16, 8, 1), (3, 3, 12, 3, 3)])
@pytest.mark.parametrize("causal", [False, True])
def test_gqa_matches_sdpa_with_repeat_interleave(B, L, D, H_q, H_kv, causal):
    gen = torch.Generator().manual_seed(D * 7 + H_kv)
    x = torch.randn(B, L, D, generator=gen, dtype=f64)
    d_k = D // H_q
    W_q, W_k, W_v, W_o = _weights(gen, D, [D, H_kv * d_k, H_kv * d_k, D])
    group = H_q // H_kv
    k = _split(x @ W_k, H_kv).repeat_interleave(group, dim=1)
    v = _split(x @ W_v, H_kv).repeat_interleave(group, dim=1)
    y = F.scaled_dot_product_attention(_split(x @ W_q, H_q), k, v, is_causal=causal)
    expected = y.transpose(1, 2).reshape(B, L, D) @ W_o
    keep = torch.ones(L, L, dtype=torch.bool).tril() if causal else None
    got = gqa_ref.grouped_query_attention(x, W_q, W_k, W_v, W_o, H_q, H_kv, keep)
    torch.testing.assert_close(got, expected, rtol=1e-10, atol=1e-10)
    native = F.scaled_dot_product_attention(_split(x @ W_q, H_q), _split(x @ W_k, H_kv), _split(x @ W_v, H_kv),
                                            is_causal=causal, enable_gqa=True)
    torch.testing.assert_close(got, native.transpose(1, 2).reshape(B, L, D) @ W_o, rtol=1e-10, atol=1e-10)


def test_gqa_with_equal_heads_is_mha():
    gen = torch.Generator().manual_seed(3)
    x = torch.randn(2, 5, 12, generator=gen, dtype=f64)
    W = _weights(gen, 12, [12] * 4)
    torch.testing.assert_close(gqa_ref.grouped_query_attention(x, *W, 3, 3),
                               mha_ref.multi_head_attention(x, x, x, 3, *W), rtol=0, atol=0)
