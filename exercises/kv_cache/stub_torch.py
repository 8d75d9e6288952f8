"""Exercise `kv_cache` (PyTorch track): cached multi-head self-attention with torch tensors.

Read the full statement with `grade show kv_cache --track torch`. Grade your work with
`grade submit kv_cache --track torch THIS_FILE`. F.scaled_dot_product_attention and
nn.MultiheadAttention are forbidden; forward must be differentiable (gradients are graded).
"""

import torch


class CachedAttention:
    """Causal multi-head self-attention that keeps the keys and values of past tokens.

    Attributes:
        k_cache: None, or a tensor (B, H, T, d_k) holding the keys of the T tokens seen so far.
        v_cache: None, or a tensor (B, H, T, d_k) holding their values.
    """

    def __init__(self, d_model: int, num_heads: int):
        self.d_model = d_model
        self.num_heads = num_heads
        self.k_cache = None
        self.v_cache = None

    def forward(self, x, W_q, W_k, W_v, W_o, use_cache: bool = True) -> torch.Tensor:
        """Attend from the new tokens `x` (B, L_new, D) to every token seen so far; return (B, L_new, D).

        New token i sits at absolute position T + i (T tokens cached) and attends to positions <= T + i.
        With use_cache=True the new keys/values are appended to the cache; with use_cache=False the call
        attends causally over `x` alone and leaves the cache untouched. Projections multiply on the
        right (Q = x @ W_q); head h owns columns h*d_k:(h+1)*d_k.
        """
        raise NotImplementedError("implement CachedAttention.forward")

    def clear_cache(self) -> None:
        """Forget every cached token."""
        raise NotImplementedError("implement CachedAttention.clear_cache")
