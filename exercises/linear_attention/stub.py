"""Exercise `linear_attention`: kernelised attention in linear time (NumPy).

Read the full statement with `grade show linear_attention`. Grade your work with
`grade submit linear_attention THIS_FILE`.
"""

import numpy as np


def linear_attention(query, key, value, causal=False):
    """Linear attention with the feature map phi(x) = elu(x) + 1 (Katharopoulos et al. 2020).

    Args:
        query: (B, H, L, d_k) array. key: (B, H, L, d_k) array. value: (B, H, L, d_v) array.
        causal: when True, query i only sees keys j <= i.

    Row i of the result is phi(q_i)^T S / (phi(q_i)^T z) with S = sum_j phi(k_j) v_j^T (d_k x d_v)
    and z = sum_j phi(k_j) (d_k), the sums over every j, or over j <= i when causal (prefix sums or
    a running state). Never form an L x L matrix: work and memory must grow linearly in L.
    float16 input is computed in float32 and cast back.

    Returns:
        (B, H, L, d_v) array in query's dtype. Do not modify the inputs.

    Raises:
        ValueError: an input is not 4-D, the inputs differ in (B, H, L), or query and key differ in d_k.
    """
    raise NotImplementedError("implement linear_attention")
