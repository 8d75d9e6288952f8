"""the heads were split by a reshape to (B, H, L, d_k) without the transpose from (B, L, H, d_k), so each head mixes positions.

Must fail: self_attention
"""
PATCH = [("q = (query @ W_q).view(B, L_q, H, d_k).transpose(1, 2)", "q = (query @ W_q).reshape(B, H, L_q, d_k)"),
         ("k = (key @ W_k).view(B, L_k, H, d_k).transpose(1, 2)", "k = (key @ W_k).reshape(B, H, L_k, d_k)"),
         ("v = (value @ W_v).view(B, L_k, H, d_k).transpose(1, 2)", "v = (value @ W_v).reshape(B, H, L_k, d_k)"),
         ("y = y.transpose(1, 2).contiguous().view(B, L_q, D)", "y = y.reshape(B, L_q, D)")]
