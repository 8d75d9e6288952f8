"""Exercise `transformer_block`: a pre-LN transformer block without nn.Module (NumPy).

Read the full statement with `grade show transformer_block`. Grade your work with
`grade submit transformer_block THIS_FILE --track numpy`.
"""

import numpy as np


def transformer_block(x, params, num_heads, mask=None):
    """One pre-LN transformer block in eval mode (no dropout).

    h   = x + MHA(LN1(x))
    out = h + GELU(LN2(h) @ W_1 + b_1) @ W_2 + b_2

    Args:
        x: (B, L, D) array.
        params: dict of arrays: ln1_weight, ln1_bias, ln2_weight, ln2_bias (D,); W_q, W_k, W_v,
            W_o (D, D); W_1 (D, d_ff); b_1 (d_ff,); W_2 (d_ff, D); b_2 (D,). All used as x @ W + b.
        num_heads: number of attention heads H; D must be divisible by it (else raise ValueError).
        mask: None, or a bool or numeric array broadcastable to (B, H, L, L);
            nonzero / True = may attend, 0 / False = masked out.

    LayerNorm: over the last axis, biased (population) variance, eps = 1e-5 inside the square root.
    GELU: exact, 0.5 * x * (1 + erf(x / sqrt(2))); NumPy has no erf: vectorise math.erf (np.vectorize or np.frompyfunc). Write LayerNorm and attention yourself.

    Returns:
        (B, L, D) array in x's dtype, (values only in the NumPy track).
        A query row whose keys are all masked gets attention output 0. Do not modify the inputs.
    """
    raise NotImplementedError("implement transformer_block")
