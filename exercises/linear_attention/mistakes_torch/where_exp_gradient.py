"""the values are right but the gradient is NaN where a feature is large: exp(x) overflowed to inf on a branch the forward discards, and the backward multiplied that branch's zero gradient by inf (e.g. phi written torch.where(x > 0, x + 1, torch.exp(x)): past ~88 in float32 exp(x) is inf; pytorch/pytorch#68425). Take exp of min(x, 0), or use F.elu(x) + 1.

Must fail: gradients
"""
PATCH = [("    return torch.where(x > 0, x + 1, torch.exp(torch.clamp(x, max=0)))", "    return torch.where(x > 0, x + 1, torch.exp(x))")]
