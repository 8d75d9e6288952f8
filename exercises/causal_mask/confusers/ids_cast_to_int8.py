"""Confuser: the token ids are cast to int8 (signed), not uint8, before the comparison with
pad_token ("ids fit in a byte"): ids wrap modulo 256 as with uint8 on these cases, so
ids_cast_to_uint8 replays it, but its sentence must say what the replay proves (ids wrapped modulo
256, as a cast to uint8 or int8 does), not name uint8 alone. From a confuser hunt.

Must not name: pad_token_ignored, padding_polarity_inverted
May name: ids_cast_to_uint8
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
    return mask[None, None, :, :]                            # (1, 1, L_q, L_k)


def create_padding_mask(seq: np.ndarray, pad_token: int = 0) -> np.ndarray:
    """Padding mask of shape ``(B, 1, 1, L)``: every query may attend to key j iff ``seq[b, j]``
    is not ``pad_token``."""
    seq = np.asarray(seq)
    if seq.ndim != 2:
        raise ValueError(f"seq must be (B, L), got shape {seq.shape}")
    keep = seq.astype(np.int8) != np.int8(pad_token)
    return keep[:, None, None, :]                            # (B, 1, 1, L) hides keys, not queries


def create_combined_mask(seq: np.ndarray, pad_token: int = 0) -> np.ndarray:
    """Causal AND padding, shape ``(B, 1, L, L)``."""
    seq = np.asarray(seq)
    B, L = seq.shape
    causal = create_causal_mask(L)                           # (1, 1, L, L)
    padding = create_padding_mask(seq, pad_token)            # (B, 1, 1, L)
    return causal & padding                                  # (B, 1, L, L)
