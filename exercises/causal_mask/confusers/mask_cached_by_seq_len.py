"""Confuser: create_causal_mask caches its masks in a module-level dict keyed by seq_len alone: the first call for a
seq_len is right whatever its kv_len, a later call with the same seq_len gets that stale mask. It does
use kv_len (the (3, 8) case is right), so "kv_len was ignored" (said where the stale mask was the
square one) is not its cause; the hint now needs every call with kv_len != seq_len to be square.

Must not name: "kv_len was ignored", kv_len_ignored
"""
import numpy as np

_MASKS = {}   # seq_len -> mask


def create_causal_mask(seq_len: int, kv_len: int | None = None) -> np.ndarray:
    """Causal mask of shape ``(1, 1, seq_len, kv_len)``: query i may attend to key j iff
    ``j <= i + (kv_len - seq_len)``.

    Raises:
        ValueError: ``kv_len < seq_len`` (the queries would not be the last positions of the keys).
    """
    if kv_len is None:
        kv_len = seq_len
    if kv_len < seq_len:
        raise ValueError(f"kv_len ({kv_len}) must be >= seq_len ({seq_len})")
    if seq_len not in _MASKS:                                # masks are reused every forward pass: cache them
        offset = kv_len - seq_len
        i = np.arange(seq_len)[:, None]                      # (L_q, 1) query index
        j = np.arange(kv_len)[None, :]                       # (1, L_k) key index
        _MASKS[seq_len] = (j <= i + offset)[None, None, :, :]  # (1, 1, L_q, L_k) bottom-right aligned
    return _MASKS[seq_len].copy()


def create_padding_mask(seq: np.ndarray, pad_token: int = 0) -> np.ndarray:
    """Padding mask of shape ``(B, 1, 1, L)``: every query may attend to key j iff ``seq[b, j]``
    is not ``pad_token``."""
    seq = np.asarray(seq)
    if seq.ndim != 2:
        raise ValueError(f"seq must be (B, L), got shape {seq.shape}")
    keep = seq != pad_token                                  # (B, L) real tokens
    return keep[:, None, None, :]                            # (B, 1, 1, L) hides keys, not queries


def create_combined_mask(seq: np.ndarray, pad_token: int = 0) -> np.ndarray:
    """Causal AND padding, shape ``(B, 1, L, L)``."""
    seq = np.asarray(seq)
    B, L = seq.shape
    causal = create_causal_mask(L)                           # (1, 1, L, L)
    padding = create_padding_mask(seq, pad_token)            # (B, 1, 1, L)
    return causal & padding                                  # (B, 1, L, L)
