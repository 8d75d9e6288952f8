"""Exercise `flash_attention`: tiled attention with the online softmax of FlashAttention (NumPy).

Read the full statement with `grade show flash_attention`. Grade your work with
`grade submit flash_attention THIS_FILE --track numpy`.
"""

import numpy as np


def tiled_attention(q, k, v, block_size=64, causal=False):
    """softmax(q k^T / sqrt(d)) v, computed block by block without an L_q x L_k score matrix.

    Args:
        q: (B, H, L_q, d) array. k, v: (B, H, L_k, d) arrays.
        block_size: keys and values are visited in blocks of this many rows (an int >= 1, else
            raise ValueError). Lengths need not be multiples of it.
        causal: query i sees key j iff j <= i + L_k - L_q (bottom-right aligned); when L_q > L_k
            the first rows see nothing and give 0.

    Keep a running max and a running sum per query row (the online softmax); never hold the whole
    (L_q, L_k) score matrix, whatever `causal` is.

    Returns:
        (B, H, L_q, d) array in q's dtype.
        Do not modify the inputs.
    """
    raise NotImplementedError("implement tiled_attention")
