"""the gradients of x, W_q and W_k are NaN wherever a query row is fully masked, though the output is right, fully masked rows included: a NaN computed for that row (a -inf bias makes its softmax NaN; a 0/0 normalisation does the same) was zeroed after the fact (nan_to_num), which fixes the output but not the backward pass. Fill masked scores with a finite minimum, or zero those rows with torch.where after a softmax that never saw -inf.

Must fail: grad_edge_cases
"""
PATCH = [("att = att.masked_fill(~keep, torch.finfo(att.dtype).min)",
          "att = att + torch.zeros(keep.shape, dtype=att.dtype).masked_fill(~keep, float('-inf'))"),
         ("att = torch.where(keep, F.softmax(att, dim=-1), 0.0)", "att = torch.nan_to_num(F.softmax(att, dim=-1), nan=0.0)")]
