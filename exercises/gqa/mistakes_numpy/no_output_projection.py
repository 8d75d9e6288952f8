"""the merged heads were returned without the output projection W_o.

Must fail: values, float64
"""
PATCH = [("return (y @ W_o).astype(x.dtype, copy=False)", "return y.astype(x.dtype, copy=False)")]
