"""Exercise `linear_attention` (PyTorch track): kernelised attention in linear time.

Read the full statement with `grade show linear_attention --track torch`. Grade your work with
`grade submit linear_attention --track torch THIS_FILE`. F.scaled_dot_product_attention, the fused
attention kernels and nn.Module are forbidden; torch.cumsum, einsum, matmul and F.elu are fine.
"""

import torch


def linear_attention(query, key, value, causal=False):
    """Linear attention with the feature map phi(x) = elu(x) + 1 (Katharopoulos et al. 2020).

    Args:
        query: (B, H, L, d_k) tensor. key: (B, H, L, d_k) tensor. value: (B, H, L, d_v) tensor.
        causal: when True, query i only sees keys j <= i.

    Row i of the result is phi(q_i)^T S / (phi(q_i)^T z) with S = sum_j phi(k_j) v_j^T (d_k x d_v)
    and z = sum_j phi(k_j) (d_k), the sums over every j, or over j <= i when causal (prefix sums or
    a running state). Never form an L x L matrix: work and memory must grow linearly in L.
    float16/bfloat16 input is computed in float32 and cast back. Differentiable: the gradients of
    query, key and value are graded.

    Returns:
        (B, H, L, d_v) tensor in query's dtype. Do not modify the inputs.

    Raises:
        ValueError: an input is not 4-D, the inputs differ in (B, H, L), or query and key differ in d_k.
    """
    raise NotImplementedError("implement linear_attention")
