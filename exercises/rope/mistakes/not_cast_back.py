"""the result was returned at the working precision (float32) instead of x's dtype: rotate float16/bfloat16 at float32, then cast back.

Must fail: dtype_preserved
"""
PATCH = [('return (xw * cos + rotated * sin).to(x.dtype)', 'return xw * cos + rotated * sin')]
