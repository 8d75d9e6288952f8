"""gradient is NaN where a query row is fully masked, though the output is right: a NaN computed for that row (an additive -inf mask makes its softmax NaN; a 0/0 normalisation does the same) was zeroed after the fact (torch.where, nan_to_num), which fixes the output but not the backward pass, which carries the NaN into query and key. Fill masked scores with masked_fill, or zero such rows without passing through NaN.

Must fail: gradients
"""
PATCH = [("scores = scores.masked_fill(~allowed, float(\"-inf\"))                 # (..., L_q, L_k)",
          "scores = scores + torch.zeros_like(scores).masked_fill(~allowed, float(\"-inf\"))"),
         ("return _softmax_last(scores)",
          "return torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0) if mask is not None else _softmax_last(scores)")]
