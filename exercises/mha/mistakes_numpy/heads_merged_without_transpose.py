"""the heads were merged by reshaping (B, H, L_q, d_k) straight to (B, L_q, D), without swapping the head and sequence axes back: merging must be the exact inverse of the split.

Must fail: self_attention, many_heads
"""
PATCH = [("y = y.transpose(0, 2, 1, 3).reshape(B, L_q, D)", "y = y.reshape(B, L_q, D)")]
