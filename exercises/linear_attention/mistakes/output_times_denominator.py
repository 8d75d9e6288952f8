"""the output was multiplied by the normaliser phi(q_i)^T z instead of divided by it (the 1 / of D_inv = 1 / (phi(Q) z) was lost): rows are scaled up by their attention mass instead of normalised.

Must fail: values

Source: https://github.com/lucidrains/performer-pytorch/issues/40
The issue points out that causal_linear_attention_noncuda computed D_inv = torch.einsum('...nd,...nd->...n', q, k.cumsum(dim=-2)) without the 1. /, and the author fixed it in release 0.11.2.
"""
PATCH = [("return (num / den).astype(dtype)", "return (num * den).astype(dtype)")]
