"""the padding mask is True at the pad tokens: True must mean 'may attend', i.e. a real token.

Must fail: padding_mask
"""
PATCH = [("keep = seq != pad_token ", "keep = seq == pad_token ")]
