"""with causal=True, an additive (L_q, L_k) bias (0 on the keys a query sees, -inf above the bottom-right diagonal) was built once and sliced per key block: the causal path holds an L_q x L_k matrix, so its peak memory grows with seq_len^2 although the values are right (build each block's mask from that block's column indices: only L_q x block_size at a time; the path without causal is fine).

Must fail: memory_scaling
"""
PATCH = [
    ("""    rows = torch.arange(L_q).view(L_q, 1)
    for ks in range(0, max(k_end, 0), block_size):
        s = qs @ k[:, :, ks:ks + block_size].transpose(-2, -1)  # (B, H, L_q, b)
        if causal:
            cols = torch.arange(ks, ks + s.shape[-1]).view(1, -1)
            s = s.masked_fill(cols > rows + offset, float("-inf"))  # (B, H, L_q, b)""",
     """    rows = torch.arange(L_q).view(L_q, 1)
    if causal:                                                  # (L_q, L_k): the whole causal bias
        bias = torch.zeros((L_q, L_k), dtype=q.dtype).masked_fill(
            torch.arange(L_k).view(1, L_k) > rows + offset, float("-inf"))
    for ks in range(0, max(k_end, 0), block_size):
        s = qs @ k[:, :, ks:ks + block_size].transpose(-2, -1)  # (B, H, L_q, b)
        if causal:
            s = s + bias[:, ks:ks + s.shape[-1]]                 # (B, H, L_q, b)"""),
]
