"""Exercise `causal_mask` (PyTorch track): attention masks as torch tensors.

Read the full statement with `grade show causal_mask --track torch`. Grade your work with
`grade submit causal_mask --track torch THIS_FILE`. Token ids arrive as integer tensors; return
bool (or 0/1) tensors.

Convention: True (or 1) = may attend, False (or 0) = masked out. Masks broadcast against attention
scores of shape (B, H, L_q, L_k).
"""

import torch


def create_causal_mask(seq_len: int, kv_len: int | None = None) -> torch.Tensor:
    """Causal mask of shape (1, 1, seq_len, kv_len).

    Query i may attend to key j iff j <= i + (kv_len - seq_len): the queries are the last seq_len
    of the kv_len positions (decoding with a KV cache). kv_len defaults to seq_len (the usual lower
    triangle).

    Raises:
        ValueError: kv_len < seq_len.
    """
    raise NotImplementedError("implement create_causal_mask")


def create_padding_mask(seq: torch.Tensor, pad_token: int = 0) -> torch.Tensor:
    """Padding mask of shape (B, 1, 1, L) for token ids `seq` of shape (B, L).

    Every query may attend to key j of sequence b iff seq[b, j] != pad_token. Do not modify `seq`.
    """
    raise NotImplementedError("implement create_padding_mask")


def create_combined_mask(seq: torch.Tensor, pad_token: int = 0) -> torch.Tensor:
    """Causal AND padding mask of shape (B, 1, L, L) for token ids `seq` of shape (B, L)."""
    raise NotImplementedError("implement create_combined_mask")
