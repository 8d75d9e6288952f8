"""Exercise `causal_mask`: attention masks in NumPy.

Read the full statement with `grade show causal_mask`. Grade your work with
`grade submit causal_mask THIS_FILE`.

Convention: True (or 1) = may attend, False (or 0) = masked out. Masks broadcast against attention
scores of shape (B, H, L_q, L_k).
"""

import numpy as np


def create_causal_mask(seq_len: int, kv_len: int | None = None) -> np.ndarray:
    """Causal mask of shape (1, 1, seq_len, kv_len).

    Query i may attend to key j iff j <= i + (kv_len - seq_len): the queries are the last seq_len
    of the kv_len positions (decoding with a KV cache). kv_len defaults to seq_len (the usual lower
    triangle).

    Raises:
        ValueError: kv_len < seq_len.
    """
    raise NotImplementedError("implement create_causal_mask")


def create_padding_mask(seq: np.ndarray, pad_token: int = 0) -> np.ndarray:
    """Padding mask of shape (B, 1, 1, L) for token ids `seq` of shape (B, L).

    Every query may attend to key j of sequence b iff seq[b, j] != pad_token. Do not modify `seq`.
    """
    raise NotImplementedError("implement create_padding_mask")


def create_combined_mask(seq: np.ndarray, pad_token: int = 0) -> np.ndarray:
    """Causal AND padding mask of shape (B, 1, L, L) for token ids `seq` of shape (B, L)."""
    raise NotImplementedError("implement create_combined_mask")
