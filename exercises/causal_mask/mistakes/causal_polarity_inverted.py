"""the causal mask marks the positions to hide (True above the diagonal, the convention of torch's boolean attn_mask) where True must mean 'may attend': every allowed key is False and every future key True.

Must fail: causal_square, no_future_leakage
"""
PATCH = [("mask = j <= i + offset ", "mask = j > i + offset "),
         ("return causal & padding ", "return ~causal & padding ")]
