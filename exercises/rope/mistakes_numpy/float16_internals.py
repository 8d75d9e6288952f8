"""float16 input was rotated in float16 (the angle table, cos/sin and the products all in half precision): the angles lose most of their digits once positions reach the hundreds; rotate float16 at float32, then cast back.

Must fail: half_precision
"""
PATCH = [("    work = np.float64 if x.dtype == np.float64 else np.float32", "    work = np.float64 if x.dtype == np.float64 else x.dtype.type")]
