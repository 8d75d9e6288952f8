"""each column j used its own exponent j/d_model, so the cos column of a pair has a different frequency from its sin column; both use 10000^(2i/d_model).

Must fail: values
"""
PATCH = [('pe[:, 1::2] = np.cos(angle)', 'pe[:, 1::2] = np.cos(p[:, None] * np.power(10000.0, -(two_i + 1) / d_model))')]
