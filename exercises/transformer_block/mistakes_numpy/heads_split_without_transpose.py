"""the heads were split with reshape(B, H, L, d_k) straight from (B, L, D), without the transpose: head h owns columns h*d_k:(h+1)*d_k, so reshape to (B, L, H, d_k), then swap axes 1 and 2 (and the inverse to merge).

Must fail: heads
"""
PATCH = [('q = (x @ W_q).reshape(B, L, H, d_k).transpose(0, 2, 1, 3)', 'q = (x @ W_q).reshape(B, H, L, d_k)'), ('k = (x @ W_k).reshape(B, L, H, d_k).transpose(0, 2, 1, 3)', 'k = (x @ W_k).reshape(B, H, L, d_k)'), ('v = (x @ W_v).reshape(B, L, H, d_k).transpose(0, 2, 1, 3)', 'v = (x @ W_v).reshape(B, H, L, d_k)'), ('y = (att @ v).transpose(0, 2, 1, 3).reshape(B, L, D)', 'y = (att @ v).reshape(B, L, D)')]
