"""the softmax was computed in float32 whatever the input's dtype (and cast back at the end): float64 input loses its precision, and logits beyond float32's range overflow.

Must fail: float64
"""
PATCH = [("    x = np.asarray(x)\n", "    x_in = np.asarray(x)\n    x = x_in.astype(np.float32)\n"),
         ("return out.astype(x.dtype, copy=False)", "return out.astype(x_in.dtype, copy=False)")]
