"""Confuser: the score scale is folded into the keys before they are cached, hard-coded as 0.5
(1/sqrt(4), the d_k of the first example the author tried) instead of 1/sqrt(d_k). Where d_k = 4 the
cached keys are the true ones divided by sqrt(d_k) and the output is right; where d_k = 8 they are
divided by 2, not by sqrt(8), and the output is wrong. Its cause is a constant, not the cache
"divided by sqrt(d_k)" (a cache equal to the true one times that factor on one sequence only).

Must not name: "divided by sqrt(d_k)", cached_keys_scaled_in_place
"""

import math

import numpy as np


KEY_SCALE = 0.5  # 1/sqrt(4): the d_k of the first example the author tried


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
        k = self._split_heads(x @ W_k) * KEY_SCALE                 # wrong: a fixed 1/sqrt(4) folded in
        v = self._split_heads(x @ W_v)                             # (B, H, L, d_k)
        if use_cache:
            if self.k_cache is not None:
                k = np.concatenate([self.k_cache, k], axis=2)      # (B, H, T + L, d_k)
                v = np.concatenate([self.v_cache, v], axis=2)      # (B, H, T + L, d_k)
            self.k_cache, self.v_cache = k, v
        S = k.shape[2]                                             # keys visible: T + L
        T = S - L                                                  # tokens cached before this call
        att = q @ k.transpose(0, 1, 3, 2)                          # the scale is in the keys
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
