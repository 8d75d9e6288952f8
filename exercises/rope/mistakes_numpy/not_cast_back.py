"""float16 input was rotated at float32 and returned as float32: the result keeps x's dtype, so cast it back.

Must fail: dtype_preserved
"""
PATCH = [('return (xw * cos + rotated * sin).astype(x.dtype)', 'return (xw * cos + rotated * sin).astype(work)')]
