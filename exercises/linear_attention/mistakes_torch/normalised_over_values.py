"""the output was normalised over the wrong axis: each row of phi(q_i)^T S was divided by its own sum over the d_v value features, instead of by phi(q_i)^T z, the sum of the attention weights over the keys.

Must fail: values
"""
PATCH = [("    return (num / den).to(dtype)", "    return (num / num.sum(dim=-1, keepdim=True)).to(dtype)")]
