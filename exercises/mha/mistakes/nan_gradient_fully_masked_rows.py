"""gradient is NaN where a query row is fully masked: an additive -inf mask makes the softmax of that row NaN, and nan_to_num after it fixes the output but not the backward pass (the softmax of an all -inf row has no derivative). Fill masked scores with a finite value, or zero such rows without passing through NaN.

Must fail: grad_edge_cases
"""
PATCH = [("att = att.masked_fill(~keep, torch.finfo(att.dtype).min)",
          "att = att + torch.zeros_like(att).masked_fill(~keep, float('-inf'))"),
         ("att = torch.where(keep, F.softmax(att, dim=-1), 0.0)", "att = torch.nan_to_num(F.softmax(att, dim=-1), nan=0.0)")]
