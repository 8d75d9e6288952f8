"""the running max stayed above every score of a row (as when m starts at 0 or another finite floor instead of -inf, is clamped at a floor, or the zero scores of padded keys enter the block max): a shift above a row's scores is valid only while some score is near it; when every score of a row is in the negative hundreds, exp(s - m) underflows to 0 in float32 and the row's sum and output are lost. Start m at -inf and let the block maxima of the real scores alone set it (the first block's max then becomes the shift).

Must fail: large_scores
"""
PATCH = [("m = np.full((B, H, L_q, 1), -np.inf, dtype=q.dtype)         # running max",
          "m = np.zeros((B, H, L_q, 1), dtype=q.dtype)                 # running max")]
