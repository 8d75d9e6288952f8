"""Baseline: multi-head attention with the softmax written as exp(s - logsumexp(s)), as ``torch.logsumexp`` users write it.

Correct, but in float32 its exponent ``s - lse`` carries the rounding error of ``lse``, which grows
with the scores' magnitude (about |s| * 6e-8 relative on every weight when the scores are in the
hundreds), an error the max-subtraction reference does not make. It runs on the host only, beside
the reference, so that the tolerance covers this standard formulation too (see
``grader.judge.tolerance``), as the softmax exercise's ``baselines/logsumexp.py`` does.
"""

import math

import torch


def _softmax(att):
    """Softmax over the last axis as exp(att - logsumexp(att)); att holds no -inf (finite mask fill)."""
    return torch.exp(att - torch.logsumexp(att, dim=-1, keepdim=True))


def multi_head_attention(query, key, value, num_heads, W_q, W_k, W_v, W_o, mask=None):
    """MHA as the reference computes it, with the softmax written as exp(s - logsumexp(s)); same shapes and dtype."""
    B, L_q, D = query.shape
    L_k = key.shape[1]
    if num_heads <= 0 or D % num_heads != 0:
        raise ValueError(f"d_model={D} is not divisible by num_heads={num_heads}")
    H, d_k = num_heads, D // num_heads

    q = (query @ W_q).view(B, L_q, H, d_k).transpose(1, 2)  # (B, H, L_q, d_k)
    k = (key @ W_k).view(B, L_k, H, d_k).transpose(1, 2)    # (B, H, L_k, d_k)
    v = (value @ W_v).view(B, L_k, H, d_k).transpose(1, 2)  # (B, H, L_k, d_k)

    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d_k))  # (B, H, L_q, L_k)
    if mask is not None:
        keep = mask != 0                                      # broadcasts to (B, H, L_q, L_k)
        att = att.masked_fill(~keep, torch.finfo(att.dtype).min)  # (B, H, L_q, L_k) finite: no NaN
        att = torch.where(keep, _softmax(att), 0.0)  # (B, H, L_q, L_k) all-masked row -> 0
    else:
        att = _softmax(att)                          # (B, H, L_q, L_k)
    y = att @ v                                               # (B, H, L_q, d_k)
    y = y.transpose(1, 2).contiguous().view(B, L_q, D)        # (B, L_q, D) heads side by side
    return y @ W_o                                            # (B, L_q, D)
