"""the mask multiplied the scores (scores * mask) instead of excluding the masked keys: a masked key gets score 0, so it still receives weight exp(0 - max); set masked scores to -inf before the softmax.

Must fail: mask_2d, mask_padding, mask_4d, fully_masked_rows
"""
PATCH = [("scores = np.where(allowed, scores, -np.inf)                 # (..., L_q, L_k)",
          "scores = scores * np.asarray(mask)")]
