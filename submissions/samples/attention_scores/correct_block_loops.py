"""Correct: loops over the broadcast leading dimensions (itertools.product), each (L_q, L_k) block with @ and a per-row stable softmax."""
import numpy as np
import itertools
def _block(q, k, keep):
    s = q @ k.T / np.sqrt(q.shape[-1])
    s = np.where(keep, s, -np.inf)
    out = np.zeros_like(s)
    for i in range(s.shape[0]):
        row = s[i]
        if np.isneginf(row).all():
            continue
        e = np.exp(row - row.max())
        out[i] = e / e.sum()
    return out
def compute_attention_scores(query, key, mask=None):
    lead = np.broadcast_shapes(query.shape[:-2], key.shape[:-2])
    Lq, Lk = query.shape[-2], key.shape[-2]
    full = lead + (Lq, Lk)
    keep = np.ones(full, bool) if mask is None else np.broadcast_to(np.asarray(mask) != 0, np.broadcast_shapes(full, np.shape(mask)))
    full = keep.shape
    q = np.broadcast_to(query, full[:-2] + query.shape[-2:])
    k = np.broadcast_to(key, full[:-2] + key.shape[-2:])
    out = np.zeros(full, dtype=query.dtype)
    for idx in itertools.product(*[range(n) for n in full[:-2]]):
        out[idx] = _block(q[idx], k[idx], keep[idx])
    return out
def scaled_dot_product_attention(query, key, value, mask=None):
    w = compute_attention_scores(query, key, mask)
    return np.matmul(w, value).astype(query.dtype), w
