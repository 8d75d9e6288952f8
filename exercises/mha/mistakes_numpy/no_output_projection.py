"""the merged heads were returned without the output projection W_o.

Must fail: self_attention
"""
PATCH = [("return (y @ W_o).astype(query.dtype, copy=False)", "return y.astype(query.dtype, copy=False)")]
