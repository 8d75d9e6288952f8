"""GELU was approximated as x * sigmoid(1.702 x); the block uses the exact GELU, 0.5 x (1 + erf(x / sqrt(2))).

Must fail: values
"""
PATCH = [('return (0.5 * x * (1.0 + erf)).astype(x.dtype)', 'return (x / (1.0 + np.exp(-1.702 * x))).astype(x.dtype)')]
