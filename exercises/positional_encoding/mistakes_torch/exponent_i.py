"""the frequencies used 10000^(i/d_model) for pair i; the exponent is 2i/d_model (pair i owns columns 2i and 2i+1).

Must fail: values
"""
PATCH = [('-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model', '-torch.arange(0, d_model // 2, dtype=torch.float64) / d_model')]
