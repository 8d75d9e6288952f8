"""scores were divided by d_k instead of sqrt(d_k) (as when the 1/sqrt(d_k) scale is applied twice).

Must fail: values
"""
PATCH = [("np.asarray(math.sqrt(d_k), dtype=x.dtype)", "np.asarray(d_k, dtype=x.dtype)")]
