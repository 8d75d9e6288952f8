"""the feature map was elu(x) without the + 1: elu is negative for x < 0, so the weights phi(q)^T phi(k) can be negative and the denominators near 0; phi(x) = elu(x) + 1 is positive everywhere.

Must fail: values
"""
PATCH = [("    return torch.where(x > 0, x + 1, torch.exp(torch.clamp(x, max=0)))",
          "    return torch.where(x > 0, x, torch.exp(torch.clamp(x, max=0)) - 1)")]
