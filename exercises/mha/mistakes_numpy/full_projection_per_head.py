"""every head projected the full width (x @ W, all D columns) and kept only its own d_k columns, so the projections cost num_heads times the work (project once at full width, then split the result into heads).

Must fail: flops_scaling
"""
PATCH = [('    q = (query @ W_q).reshape(B, L_q, H, d_k).transpose(0, 2, 1, 3)   # (B, H, L_q, d_k)\n    k = (key @ W_k).reshape(B, L_k, H, d_k).transpose(0, 2, 1, 3)     # (B, H, L_k, d_k)\n    v = (value @ W_v).reshape(B, L_k, H, d_k).transpose(0, 2, 1, 3)   # (B, H, L_k, d_k)',
          '    q = np.stack([(query @ W_q)[..., h * d_k:(h + 1) * d_k] for h in range(H)], axis=1)  # full width per head\n    k = np.stack([(key @ W_k)[..., h * d_k:(h + 1) * d_k] for h in range(H)], axis=1)    # (B, H, L_k, d_k)\n    v = np.stack([(value @ W_v)[..., h * d_k:(h + 1) * d_k] for h in range(H)], axis=1)  # (B, H, L_k, d_k)')]
