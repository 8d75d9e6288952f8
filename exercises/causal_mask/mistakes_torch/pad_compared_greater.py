"""padding was found with seq > pad_token (as if padding were the smallest id) instead of seq != pad_token: real tokens below pad_token are masked as padding.

Must fail: padding_mask, combined_mask
"""
PATCH = [("keep = seq != pad_token", "keep = seq > pad_token")]
