"""Exercise `gqa` (NumPy track): grouped-query attention from scratch in NumPy.

Read the full statement with `grade show gqa --track numpy`. Grade your work with
`grade submit gqa --track numpy THIS_FILE`. torch and SciPy are forbidden.
"""

import numpy as np


def grouped_query_attention(x, W_q, W_k, W_v, W_o, num_query_heads, num_kv_heads, mask=None):
    """Grouped-query self-attention over `x`.

    Args:
        x: (B, L, D) array.
        W_q, W_o: (D, D) weights; W_k, W_v: (D, num_kv_heads * d_k) with d_k = D // num_query_heads.
            Projections multiply on the right (`x @ W_q`).
        num_query_heads: H_q; D must be divisible by it (else raise ValueError).
        num_kv_heads: H_kv; must divide H_q (else raise ValueError). Query head h uses KV head
            h // (H_q // H_kv).
        mask: None, or a bool or numeric array broadcastable to (B, H_q, L, L);
            nonzero / True = may attend, 0 / False = masked out.

    Returns:
        (B, L, D) array in x's dtype (float32 or float64). A query
        row whose keys are all masked gives 0. Do not modify the inputs.
    """
    raise NotImplementedError("implement grouped_query_attention")
