"""gradient is NaN where a query row is fully masked, though the output is right: a NaN computed for that row (an additive -inf mask makes its softmax NaN; a 0/0 normalisation does the same) was repaired after the fact (nan_to_num, torch.where), which fixes the output but not the backward pass. Fill masked scores with a finite value, or zero such rows with torch.where without passing through NaN.

Must fail: grad_edge_cases
"""
PATCH = [("att = att.masked_fill(~keep, torch.finfo(att.dtype).min)",
          "att = att + torch.zeros_like(att).masked_fill(~keep, float('-inf'))"),
         ("att = torch.where(keep, F.softmax(att, dim=-1), 0.0)", "att = torch.nan_to_num(F.softmax(att, dim=-1), nan=0.0)")]
