"""when L_q != L_k (a chunk of queries over a longer cache, or more queries than keys) the tiles were skipped for plain attention over the whole (L_q, L_k) score matrix, so that path's peak memory grows with L_q x L_k although the values are right (the tiled loop handles any L_q and L_k: only the causal offset L_k - L_q changes; equal lengths are fine).

Must fail: memory_scaling
"""
PATCH = [
    ("""    offset = L_k - L_q                                          # bottom-right alignment
""",
     """    offset = L_k - L_q                                          # bottom-right alignment
    if L_q != L_k:                                              # plain attention for unequal lengths
        s = q @ k.transpose(-2, -1) * (1.0 / math.sqrt(d))      # (B, H, L_q, L_k): the whole matrix
        if causal:
            hidden = torch.arange(L_k).view(1, L_k) > torch.arange(L_q).view(L_q, 1) + offset
            s = s.masked_fill(hidden, float("-inf"))
        top = s.amax(dim=-1, keepdim=True)
        e = torch.exp(s - torch.where(torch.isfinite(top), top, torch.zeros_like(top)))
        total = e.sum(dim=-1, keepdim=True)
        seen = total > 0
        return torch.where(seen, (e @ v) / torch.where(seen, total, torch.ones_like(total)), torch.zeros_like(q))
"""),
]
