"""float16 input was computed and accumulated in float16: the sums S and z (and phi(q)^T S) lose precision and overflow float16's largest value, 65504, for values in the tens; accumulate in float32 and cast the result back.

Must fail: half_precision
"""
PATCH = [("    work = np.float32 if dtype == np.float16 else dtype         # half precision accumulates in float32",
          "    work = dtype")]
