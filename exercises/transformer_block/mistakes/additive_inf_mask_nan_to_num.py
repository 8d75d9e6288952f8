"""the gradient is NaN where a query row is fully masked, though the output is right: a NaN computed for that row (an additive -inf mask makes its softmax NaN; a 0/0 normalisation does the same) was repaired after the fact (nan_to_num), which fixes the forward output but not the backward pass, so NaN flows back into x, W_q, W_k and the first LayerNorm.

Must fail: grad_x, grad_params
"""
PATCH = [
    ("        att = att.masked_fill(~keep, torch.finfo(att.dtype).min)\n"
     "        att = torch.where(keep, F.softmax(att, dim=-1), 0.0)  # a fully masked row gives weights 0\n",
     "        att = att + torch.zeros_like(att).masked_fill(~keep, float(\"-inf\"))\n"
     "        att = torch.nan_to_num(F.softmax(att, dim=-1), nan=0.0)\n"),
]
