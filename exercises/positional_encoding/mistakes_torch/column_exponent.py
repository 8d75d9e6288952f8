"""each column j used its own exponent j/d_model, so the cos column of a pair has a different frequency from its sin column; both use 10000^(2i/d_model).

Must fail: values
"""
PATCH = [('pe[:, 1::2] = torch.cos(angle)',
          'pe[:, 1::2] = torch.cos(p[:, None] * 10000.0 ** (-torch.arange(1, d_model, 2, dtype=torch.float64) / d_model))')]
