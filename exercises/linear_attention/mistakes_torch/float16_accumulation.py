"""float16 (or bfloat16) input was computed and accumulated in that dtype: the sums S and z (and phi(q)^T S) lose precision and overflow float16's largest value, 65504, for values in the tens; accumulate in float32 and cast the result back.

Must fail: half_precision
"""
PATCH = [("    work = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype", "    work = dtype")]
