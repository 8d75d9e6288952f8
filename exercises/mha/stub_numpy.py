"""Exercise `mha` (NumPy track): multi-head attention from scratch in NumPy.

Read the full statement with `grade show mha --track numpy`. Grade your work with
`grade submit mha --track numpy THIS_FILE`. torch and SciPy are forbidden.
"""

import numpy as np


def multi_head_attention(query, key, value, num_heads, W_q, W_k, W_v, W_o, mask=None):
    """Multi-head attention of `query` over `key`/`value`.

    Args:
        query: (B, L_q, D) array.
        key, value: (B, L_k, D) arrays.
        num_heads: number of heads H; D must be divisible by it (else raise ValueError).
        W_q, W_k, W_v, W_o: (D, D) weights; projections multiply on the right (`x @ W_q`).
        mask: None, or a bool or numeric array broadcastable to (B, H, L_q, L_k);
            nonzero / True = may attend, 0 / False = masked out.

    Returns:
        (B, L_q, D) array in the inputs' dtype (float32 or float64). A query row whose keys are
        all masked gives 0. Do not modify the inputs.
    """
    raise NotImplementedError("implement multi_head_attention")
