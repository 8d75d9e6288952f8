"""-inf logits were replaced by a finite -1e9 (masked_fill) before the softmax: a slice that is entirely -inf becomes uniform instead of zeros, and -1e9 does not fit in float16 (masked_fill raises).

Must fail: all_neg_inf, half_precision
"""
PATCH = [("m = torch.amax(x, dim=axis, keepdim=True).detach()",
          "x = x.masked_fill(torch.isneginf(x), -1e9)\n    m = torch.amax(x, dim=axis, keepdim=True).detach()")]
