"""Confuser: the causal mask is built as (1 - allowed) * -inf: 0 * -inf is NaN, so the array is NaN
where a key is allowed and -inf where it is masked, with no 0 anywhere. The hint "this looks like an
additive mask (0 where allowed, ...)" read its values after dropping the NaN and described values
this file does not have. From a confuser hunt.

Must not name: "additive mask"
"""
import numpy as np


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
    offset = kv_len - seq_len
    i = np.arange(seq_len)[:, None]                          # (L_q, 1) query index
    j = np.arange(kv_len)[None, :]                           # (1, L_k) key index
    mask = j <= i + offset                                   # (L_q, L_k) bottom-right aligned
    return ((1.0 - mask.astype(np.float64)) * -np.inf)[None, None, :, :]


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
