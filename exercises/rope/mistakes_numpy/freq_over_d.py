"""the frequencies were base^(-i/d) over the features; they are base^(-2i/d) over the d/2 pairs (i < d/2).

Must fail: values
"""
PATCH = [('np.arange(0, d, 2, dtype=work) / work(d)', 'np.arange(0, d // 2, dtype=work) / work(d)')]
