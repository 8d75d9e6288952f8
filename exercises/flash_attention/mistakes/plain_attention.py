"""the tiles were skipped: plain softmax attention over the whole (L_q, L_k) score matrix (the scores, their exponentials and the weights @ V at once), so peak memory grows with L_q x L_k on every path although the values are right (visit keys and values in blocks of block_size with a running max and a running sum).

Must fail: memory_scaling
"""
PATCH = [
    ('    offset = L_k - L_q                                          # bottom-right alignment\n',
     '    offset = L_k - L_q                                          # bottom-right alignment\n    # plain attention on every path: the tiles are skipped\n    s = q @ k.transpose(-2, -1) * (1.0 / math.sqrt(d))      # (B, H, L_q, L_k): the whole matrix\n    if causal:\n        hidden = torch.arange(L_k).view(1, L_k) > torch.arange(L_q).view(L_q, 1) + offset\n        s = s.masked_fill(hidden, float("-inf"))\n    top = s.amax(dim=-1, keepdim=True)\n    e = torch.exp(s - torch.where(torch.isfinite(top), top, torch.zeros_like(top)))\n    total = e.sum(dim=-1, keepdim=True)\n    seen = total > 0\n    return torch.where(seen, (e @ v) / torch.where(seen, total, torch.ones_like(total)), torch.zeros_like(q))\n'),
]
