"""Confuser: the attention is right (the true keys are kept in a private buffer), but k_cache exposes
them through a reshape, not a transpose: keys.reshape(B, T, H, d_k) of the (B, H, T, d_k) buffer. The
shape is that of a cache stored with its time and head axes swapped, while the values are not: time
and heads are mixed, not kept in another layout (v_cache is right).

Must not name: "axes are swapped", "before splitting heads"
"""

import math

import numpy as np


class CachedAttention:
    """Causal multi-head self-attention that remembers past keys and values.

    Attributes:
        k_cache: None, or ``(B, H, T, d_k)`` keys of the ``T`` tokens seen so far.
        v_cache: None, or ``(B, H, T, d_k)`` values of those tokens.
    """

    def __init__(self, d_model: int, num_heads: int):
        if d_model % num_heads != 0:
            raise ValueError(f"d_model ({d_model}) must be divisible by num_heads ({num_heads})")
        self.d_model = d_model
        self.num_heads = num_heads
        self.d_k = d_model // num_heads
        self.k_cache = None
        self.v_cache = None
        self._keys = None                     # the true keys, private
        self._values = None                   # the true values, private

    def _split_heads(self, t: np.ndarray) -> np.ndarray:
        B, L, _ = t.shape
        return t.reshape(B, L, self.num_heads, self.d_k).transpose(0, 2, 1, 3)   # (B, H, L, d_k)

    def forward(self, x, W_q, W_k, W_v, W_o, use_cache: bool = True) -> np.ndarray:
        """Attend from the new tokens ``x`` (B, L_new, D) to all tokens so far; returns (B, L_new, D).

        With ``use_cache=False`` the call attends causally over ``x`` alone and leaves the cache as it is.
        """
        B, L, D = x.shape
        if D != self.d_model:
            raise ValueError(f"x has width {D}, expected d_model={self.d_model}")
        q = self._split_heads(x @ W_q)                             # (B, H, L, d_k)
        k = self._split_heads(x @ W_k)                             # (B, H, L, d_k)
        v = self._split_heads(x @ W_v)                             # (B, H, L, d_k)
        if use_cache:
            if self._keys is not None:
                k = np.concatenate([self._keys, k], axis=2)      # (B, H, T + L, d_k)
                v = np.concatenate([self._values, v], axis=2)      # (B, H, T + L, d_k)
            self._keys, self._values = k, v
            T_all = k.shape[2]
            self.k_cache = k.reshape(B, T_all, self.num_heads, self.d_k)    # wrong: reshape, not transpose
            self.v_cache = v
        S = k.shape[2]                                             # keys visible: T + L
        T = S - L                                                  # tokens cached before this call
        att = q @ k.transpose(0, 1, 3, 2) / math.sqrt(self.d_k)    # (B, H, L, S)
        allowed = np.arange(S)[None, :] <= np.arange(L)[:, None] + T   # (L, S) bottom-right causal
        att = np.where(allowed, att, -np.inf)
        att = att - att.max(axis=-1, keepdims=True)                # every row keeps its diagonal: finite max
        att = np.exp(att)
        att = att / att.sum(axis=-1, keepdims=True)                # (B, H, L, S)
        y = att @ v                                                # (B, H, L, d_k)
        y = y.transpose(0, 2, 1, 3).reshape(B, L, D)               # (B, L, D) heads merged
        return (y @ W_o).astype(x.dtype, copy=False)               # (B, L, D)

    def clear_cache(self) -> None:
        """Forget every cached token (start a new sequence)."""
        self.k_cache = None
        self.v_cache = None
        self._keys = None
        self._values = None
