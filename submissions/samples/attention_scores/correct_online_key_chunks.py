"""Correct: the output by an online softmax over chunks of keys (running max, running sum and a
rescaled accumulator, as FlashAttention does), the weights from the final max and sum; masks as a
-inf fill, fully masked rows left at zero."""
import numpy as np

CHUNK = 5


def _scores(query, key, mask):
    s = np.einsum("...qd,...kd->...qk", query, key) / np.sqrt(query.shape[-1]).astype(query.dtype)
    if mask is not None:
        s = np.where(np.asarray(mask).astype(bool), s, -np.inf)
    return s


def _online(s, value):
    L_k = s.shape[-1]
    m = np.full(s.shape[:-1] + (1,), -np.inf, dtype=s.dtype)
    l = np.zeros_like(m)
    acc = np.zeros(np.broadcast_shapes(s.shape[:-1], value.shape[:-2] + (1,)) + (value.shape[-1],), dtype=s.dtype) if value is not None else None
    for start in range(0, L_k, CHUNK):
        blk = s[..., start:start + CHUNK]
        m_new = np.maximum(m, blk.max(axis=-1, keepdims=True))
        safe = np.where(np.isneginf(m_new), 0, m_new)
        alpha = np.exp(np.where(np.isneginf(m), -np.inf, m - safe))
        p = np.exp(blk - safe)
        l = l * alpha + p.sum(axis=-1, keepdims=True)
        if acc is not None:
            acc = acc * alpha + p @ value[..., start:start + CHUNK, :]
        m = m_new
    return m, l, acc


def compute_attention_scores(query, key, mask=None):
    s = _scores(query, key, mask)
    m, l, _ = _online(s, None)
    safe = np.where(np.isneginf(m), 0, m)
    return np.divide(np.exp(s - safe), l, out=np.zeros_like(s), where=l > 0)


def scaled_dot_product_attention(query, key, value, mask=None):
    s = _scores(query, key, mask)
    m, l, acc = _online(s, value)
    safe = np.where(np.isneginf(m), 0, m)
    w = np.divide(np.exp(s - safe), l, out=np.zeros_like(s), where=l > 0)
    out = np.divide(acc, l, out=np.zeros_like(acc), where=l > 0)
    return out, w
