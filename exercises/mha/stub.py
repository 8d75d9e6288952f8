"""Exercise `mha`: multi-head attention without nn.Module (PyTorch).

Read the full statement with `grade show mha`. Grade your work with
`grade submit mha THIS_FILE`.
"""

import torch


def multi_head_attention(query, key, value, num_heads, W_q, W_k, W_v, W_o, mask=None):
    """Multi-head attention of `query` over `key`/`value`.

    Args:
        query: (B, L_q, D) tensor.
        key, value: (B, L_k, D) tensors.
        num_heads: number of heads H; D must be divisible by it (else raise ValueError).
        W_q, W_k, W_v, W_o: (D, D) weights; projections multiply on the right (`x @ W_q`).
        mask: None, or a bool or numeric tensor broadcastable to (B, H, L_q, L_k);
            nonzero / True = may attend, 0 / False = masked out.

    Returns:
        (B, L_q, D) tensor in the inputs' dtype, differentiable with respect to every input and
        weight. A query row whose keys are all masked gives 0. Do not modify the inputs.
    """
    raise NotImplementedError("implement multi_head_attention")
