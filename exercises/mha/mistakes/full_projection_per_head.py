"""every head projected the full width (x @ W, all D columns) and kept only its own d_k columns, so the projections cost num_heads times the work (project once at full width, then split the result into heads).

Must fail: flops_scaling
"""
PATCH = [('    q = (query @ W_q).view(B, L_q, H, d_k).transpose(1, 2)  # (B, H, L_q, d_k)\n    k = (key @ W_k).view(B, L_k, H, d_k).transpose(1, 2)    # (B, H, L_k, d_k)\n    v = (value @ W_v).view(B, L_k, H, d_k).transpose(1, 2)  # (B, H, L_k, d_k)',
          '    q = torch.stack([(query @ W_q)[..., h * d_k:(h + 1) * d_k] for h in range(H)], dim=1)  # full width per head\n    k = torch.stack([(key @ W_k)[..., h * d_k:(h + 1) * d_k] for h in range(H)], dim=1)    # (B, H, L_k, d_k)\n    v = torch.stack([(value @ W_v)[..., h * d_k:(h + 1) * d_k] for h in range(H)], dim=1)  # (B, H, L_k, d_k)')]
