"""Exercise `attention_scores` (PyTorch track): scaled dot-product attention with torch tensors.

Read the full statement with `grade show attention_scores --track torch`. Grade your work with
`grade submit attention_scores --track torch THIS_FILE`. F.scaled_dot_product_attention and
nn.MultiheadAttention are forbidden; torch.softmax is allowed. Gradients are graded.
"""

import torch


def compute_attention_scores(query: torch.Tensor, key: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Attention weights softmax(query @ key^T / sqrt(d_k)), masked positions excluded.

    Args:
        query: (..., L_q, d_k) float32 or float64.
        key: (..., L_k, d_k); leading dimensions broadcast against query's.
        mask: optional, broadcastable to (..., L_q, L_k); bool or 0/1, nonzero/True = may attend.

    Returns:
        (..., L_q, L_k) weights, same dtype as query. A row whose keys are all masked is all 0.
    """
    raise NotImplementedError("implement compute_attention_scores")


def scaled_dot_product_attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                                 mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Scaled dot-product attention.

    Args:
        query: (..., L_q, d_k); key: (..., L_k, d_k); value: (..., L_k, d_v).
        mask: optional, broadcastable to (..., L_q, L_k), nonzero/True = may attend.

    Returns:
        (output, weights): (..., L_q, d_v) and (..., L_q, L_k), same dtype as query.
    """
    raise NotImplementedError("implement scaled_dot_product_attention")
