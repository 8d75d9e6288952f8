"""the padding mask compares the tokens with 0 whatever pad_token is: use the pad_token argument.

Must fail: padding_mask
"""
PATCH = [("keep = seq != pad_token ", "keep = seq != 0 ")]
