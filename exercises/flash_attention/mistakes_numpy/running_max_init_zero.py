"""the running max never went below 0 (as when m starts at 0 instead of -inf, or is clamped at 0): max(0, scores) is a valid shift only while some score of a row is near 0 or above; when every score of a row is in the negative hundreds, exp(s - 0) underflows to 0 in float32 and the row's sum and output are lost. Start m at -inf and let the block maxima alone set it (the first block's max then becomes the shift).

Must fail: large_scores
"""
PATCH = [("m = np.full((B, H, L_q, 1), -np.inf, dtype=q.dtype)         # running max",
          "m = np.zeros((B, H, L_q, 1), dtype=q.dtype)                 # running max")]
