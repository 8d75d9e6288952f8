"""the exponentials were not divided by their sum along the axis.

Must fail: values_1d, values_nd
"""
PATCH = [("out = np.divide(e, s, out=np.zeros_like(e), where=s > 0)", "out = e")]
