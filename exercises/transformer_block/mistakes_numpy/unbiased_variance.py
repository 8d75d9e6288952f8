"""LayerNorm used the unbiased variance (divided by D - 1, np.var(ddof=1)); LayerNorm uses the biased (population) variance, sum / D.

Must fail: values
"""
PATCH = [("var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)", "var = ((x - mean) ** 2).sum(axis=-1, keepdims=True) / (x.shape[-1] - 1)")]
