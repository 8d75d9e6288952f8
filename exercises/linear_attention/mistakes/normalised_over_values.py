"""the output was normalised over the wrong axis: each row of phi(q_i)^T S was divided by its own sum over the d_v value features, instead of by phi(q_i)^T z, the sum of the attention weights over the keys.

Must fail: values
"""
PATCH = [("    return (num / den).astype(dtype)", "    return (num / num.sum(axis=-1, keepdims=True)).astype(dtype)")]
