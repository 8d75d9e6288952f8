"""D % num_heads != 0 was not rejected with a ValueError.

Must fail: bad_num_heads
"""
PATCH = [("raise ValueError(f\"d_model={D} is not divisible by num_heads={num_heads}\")", "pass")]
