"""the result was returned as float64 whatever x's dtype; it keeps x's dtype.

Must fail: dtype_preserved
"""
PATCH = [('return (xw * cos + rotated * sin).astype(x.dtype)', 'return (xw * cos + rotated * sin).astype(np.float64)')]
