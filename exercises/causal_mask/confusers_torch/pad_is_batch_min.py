"""Confuser: the pad id is taken to be the smallest id of the batch (seq.min()) and pad_token is
ignored; nothing is compared with 0. Where 0 is a real token and the smallest id, its mask equals that
of a comparison with 0, so a hint proven on that case alone said "compared with 0 instead of pad_token"
(helper hunt); a case with no 0 among the ids refutes it.

Must not name: pad_token_ignored, "compared with 0 instead of pad_token"
"""

import torch


def create_causal_mask(seq_len: int, kv_len: int | None = None) -> torch.Tensor:
    """Causal bool mask of shape ``(1, 1, seq_len, kv_len)``: query i may attend to key j iff
    ``j <= i + (kv_len - seq_len)``.

    Raises:
        ValueError: ``kv_len < seq_len`` (the queries would not be the last positions of the keys).
    """
    if kv_len is None:
        kv_len = seq_len
    if kv_len < seq_len:
        raise ValueError(f"kv_len ({kv_len}) must be >= seq_len ({seq_len})")
    offset = kv_len - seq_len
    i = torch.arange(seq_len)[:, None]                       # (L_q, 1) query index
    j = torch.arange(kv_len)[None, :]                        # (1, L_k) key index
    mask = j <= i + offset                                   # (L_q, L_k) bottom-right aligned
    return mask[None, None, :, :]                            # (1, 1, L_q, L_k)


def create_padding_mask(seq: torch.Tensor, pad_token: int = 0) -> torch.Tensor:
    """Padding bool mask of shape ``(B, 1, 1, L)``: every query may attend to key j iff
    ``seq[b, j]`` is not ``pad_token``.

    Raises:
        ValueError: ``seq`` is not 2-D.
    """
    seq = torch.as_tensor(seq)
    if seq.dim() != 2:
        raise ValueError(f"seq must be (B, L), got shape {tuple(seq.shape)}")
    keep = seq != seq.min()                                  # assumes padding is the smallest id
    return keep[:, None, None, :]                            # (B, 1, 1, L) hides keys, not queries


def create_combined_mask(seq: torch.Tensor, pad_token: int = 0) -> torch.Tensor:
    """Causal AND padding, bool, shape ``(B, 1, L, L)``."""
    seq = torch.as_tensor(seq)
    B, L = seq.shape
    causal = create_causal_mask(L)                           # (1, 1, L, L)
    padding = create_padding_mask(seq, pad_token)            # (B, 1, 1, L)
    return causal & padding                                  # (B, 1, L, L)
