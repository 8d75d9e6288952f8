"""Correct: the four projections are written with the ndarray.dot method (x.dot(W_q)); only the new
tokens are projected and appended. It lost decode_complexity while the method went past the FLOP
counter (the D^2 projections uncounted). From a helper hunt.

Written head by head, with the cache kept as a list of per-call chunks, so that it is independent of
the reference in form as well as in the projection method.
"""
import numpy as np


class CachedAttention:
    def __init__(self, d_model, num_heads):
        if d_model % num_heads:
            raise ValueError(f"d_model={d_model} is not a multiple of num_heads={num_heads}")
        self.d_model = d_model
        self.num_heads = num_heads
        self.head_width = d_model // num_heads
        self.chunks = []

    def _cache(self, which):
        if not self.chunks:
            return None
        joined = np.concatenate([c[which] for c in self.chunks], axis=1)
        batch, seen, _ = joined.shape
        return joined.reshape(batch, seen, self.num_heads, self.head_width).transpose(0, 2, 1, 3)

    @property
    def k_cache(self):
        """(B, num_heads, T, d_k) for the T tokens seen so far, or None."""
        return self._cache(0)

    @property
    def v_cache(self):
        """(B, num_heads, T, d_k) for the T tokens seen so far, or None."""
        return self._cache(1)

    def forward(self, x, W_q, W_k, W_v, W_o, use_cache=True):
        batch, new, width = x.shape
        if width != self.d_model:
            raise ValueError("x has the wrong last dimension")
        queries = x.dot(W_q)
        keys_now = x.dot(W_k)
        values_now = x.dot(W_v)
        if use_cache:
            self.chunks.append((keys_now, values_now))
            keys = np.concatenate([c[0] for c in self.chunks], axis=1)
            values = np.concatenate([c[1] for c in self.chunks], axis=1)
        else:
            keys, values = keys_now, values_now
        total = keys.shape[1]
        offset = total - new
        hidden = np.triu(np.ones((new, total), dtype=bool), k=offset + 1)
        heads = []
        for h in range(self.num_heads):
            cols = slice(h * self.head_width, (h + 1) * self.head_width)
            logits = queries[:, :, cols] @ np.swapaxes(keys[:, :, cols], 1, 2)
            logits = logits * (1.0 / np.sqrt(self.head_width))
            logits[:, hidden] = -np.inf
            top = logits.max(axis=2, keepdims=True)
            weights = np.exp(logits - top)
            weights /= weights.sum(axis=2, keepdims=True)
            heads.append(weights @ values[:, :, cols])
        merged = np.concatenate(heads, axis=2)
        return merged.dot(W_o).astype(x.dtype, copy=False)

    def clear_cache(self):
        self.chunks = []
