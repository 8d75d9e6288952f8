"""the frequencies were base^(-i/d) over the features; they are base^(-2i/d) over the d/2 pairs (i < d/2).

Must fail: values
"""
PATCH = [('torch.arange(0, d, 2, dtype=work, device=x.device) / d', 'torch.arange(0, d // 2, dtype=work, device=x.device) / d')]
