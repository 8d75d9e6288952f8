"""Confuser: shifts by the max only for narrow dtypes ('float64 has range enough'), computes in
float64, and writes the result into a float32 output buffer. The float64 exp itself overflows at
logits near float64's max: computing in float64 would not cure it.

The narrow-dtype hint reads a float32 output whose NaN/inf lie in slices holding logits beyond
float32's range; it used to say "the float64 input was computed in float32", which this file does
not do: it now leads with what it reads.

Must not name: "the float64 input was computed in"
May name: "came out as float32", "exp overflowed"
"""
import numpy as np
def softmax(x, axis=-1):
    x = np.asarray(x)
    x64 = x.astype(np.float64)
    if x.dtype != np.float64:
        x64 = x64 - x64.max(axis=axis, keepdims=True)
        x64 = np.where(np.isnan(x64), -np.inf, x64)
    e = np.exp(x64)
    s = e.sum(axis=axis, keepdims=True)
    out = np.zeros(x.shape, dtype=np.float32)
    np.divide(e, s, out=out, where=s > 0, casting="unsafe")
    return out
