"""the result is returned in float64 for float32 input: outputs keep the input's dtype.

Must fail: dtype_preserved
"""
PATCH = [("return out.astype(x.dtype, copy=False)", "return out.astype(np.float64)")]
