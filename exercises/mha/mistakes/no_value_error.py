"""no ValueError when d_model is not divisible by num_heads.

Must fail: bad_num_heads
"""
PATCH = [("if num_heads <= 0 or D % num_heads != 0:", "if num_heads <= 0:")]
