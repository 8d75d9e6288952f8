"""phi was written torch.where(x > 0, x + 1, torch.exp(x)): the values are right, but exp(x) overflows to inf for features past ~88 (float32) on the branch where discards, and its backward multiplies the zero gradient of that branch by inf: NaN (pytorch/pytorch#68425). Take exp of min(x, 0), or use F.elu(x) + 1.

Must fail: gradients
"""
PATCH = [("    return torch.where(x > 0, x + 1, torch.exp(torch.clamp(x, max=0)))", "    return torch.where(x > 0, x + 1, torch.exp(x))")]
