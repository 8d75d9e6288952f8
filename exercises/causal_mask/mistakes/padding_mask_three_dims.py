"""the padding mask has three dimensions, (B, 1, L), instead of four, (B, 1, 1, L): broadcast against scores of shape (B, H, L_q, L_k) its batch axis lines up with the heads and its singleton with the queries, so each batch row's keys are hidden with another row's padding (keep the query axis: seq != pad_token, then [:, None, None, :]).

Must fail: padding_mask, padding_all_pad, no_padding_leakage
"""
PATCH = [("return keep[:, None, None, :]", "return keep[:, None, :]")]
