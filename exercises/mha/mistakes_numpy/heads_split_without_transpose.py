"""the heads were split by a reshape to (B, H, L, d_k) without the transpose from (B, L, H, d_k), so each head mixes positions.

Must fail: self_attention
"""
PATCH = [("(query @ W_q).reshape(B, L_q, H, d_k).transpose(0, 2, 1, 3)", "(query @ W_q).reshape(B, H, L_q, d_k)"), ("(key @ W_k).reshape(B, L_k, H, d_k).transpose(0, 2, 1, 3)", "(key @ W_k).reshape(B, H, L_k, d_k)"), ("(value @ W_v).reshape(B, L_k, H, d_k).transpose(0, 2, 1, 3)", "(value @ W_v).reshape(B, H, L_k, d_k)"), ("y = y.transpose(0, 2, 1, 3).reshape(B, L_q, D)", "y = y.reshape(B, L_q, D)")]
