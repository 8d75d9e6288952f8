"""the feature map was exp(x) instead of elu(x) + 1: another positive kernel (and exp overflows for features past ~88 in float32); the contract uses elu(x) + 1 (Katharopoulos et al. 2020, section 3.2).

Must fail: values, large_magnitudes
"""
PATCH = [("    return torch.where(x > 0, x + 1, torch.exp(torch.clamp(x, max=0)))", "    return torch.exp(x)")]
