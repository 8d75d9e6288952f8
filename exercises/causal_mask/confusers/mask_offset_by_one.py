"""Confuser: every mask is returned as allowed - 1 in float32: 0 where a key may be attended and -1
where it may not. Its values are 0 and one negative number, the look of an additive mask, but -1 masks
nothing when added to scores (an additive mask puts -inf or a large negative number there): the
nonzero entries mark the masked keys, the boolean mask's polarity inverted.

Must not name: "additive mask"
May name: causal_polarity_inverted, padding_polarity_inverted, "polarity"
"""
import numpy as np


def _offset(allowed: np.ndarray) -> np.ndarray:
    return allowed.astype(np.float32) - 1.0          # wrong: 0 where allowed, -1 where masked


def create_causal_mask(seq_len, kv_len=None):
    kv_len = seq_len if kv_len is None else kv_len
    if seq_len < 0 or kv_len < seq_len:
        raise ValueError("need 0 <= seq_len <= kv_len")
    allowed = np.arange(kv_len)[None, :] <= np.arange(seq_len)[:, None] + (kv_len - seq_len)
    return _offset(allowed[None, None, :, :])       # (1, 1, seq_len, kv_len)


def create_padding_mask(seq, pad_token=0):
    return _offset((np.asarray(seq) != pad_token)[:, None, None, :])   # (B, 1, 1, L)


def create_combined_mask(seq, pad_token=0):
    seq = np.asarray(seq)
    L = seq.shape[1]
    causal = np.tril(np.ones((L, L), dtype=bool))[None, None]
    return _offset(causal & (seq != pad_token)[:, None, None, :])        # (B, 1, L, L)
