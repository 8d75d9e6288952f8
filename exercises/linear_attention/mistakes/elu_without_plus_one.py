"""the feature map was elu(x) without the + 1: elu is negative for x < 0, so the weights phi(q)^T phi(k) can be negative and the denominators near 0; phi(x) = elu(x) + 1 is positive everywhere.

Must fail: values
"""
PATCH = [("    return np.where(x > 0, x + 1, np.exp(np.minimum(x, 0)))", "    return np.where(x > 0, x, np.exp(np.minimum(x, 0)) - 1)")]
