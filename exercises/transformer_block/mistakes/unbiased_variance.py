"""LayerNorm used the unbiased variance (divided by D - 1, torch.var's default); LayerNorm uses the biased (population) variance, sum / D.

Must fail: values
"""
PATCH = [("var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)", "var = ((x - mean) ** 2).sum(dim=-1, keepdim=True) / (x.shape[-1] - 1)")]
