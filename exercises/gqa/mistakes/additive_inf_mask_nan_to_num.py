"""the mask was added as a -inf bias and the softmax's NaN rows were zeroed with nan_to_num: the output is right, fully masked rows included, but the gradients of x, W_q and W_k are NaN wherever a query row is fully masked (the softmax of an all -inf row has no derivative). Fill masked scores with a finite minimum, or zero those rows with torch.where after the softmax.

Must fail: grad_edge_cases
"""
PATCH = [("att = att.masked_fill(~keep, torch.finfo(att.dtype).min)",
          "att = att + torch.zeros(keep.shape, dtype=att.dtype).masked_fill(~keep, float('-inf'))"),
         ("att = torch.where(keep, F.softmax(att, dim=-1), 0.0)", "att = torch.nan_to_num(F.softmax(att, dim=-1), nan=0.0)")]
