"""the whole score matrix Q K^T is recomputed for every query row and only that row is kept, so the work grows like seq_len^3 instead of seq_len^2 (compute it once and take the softmax of every row together).

Must fail: work_scaling
"""
PATCH = [('    scores = query @ key.transpose(-1, -2) / math.sqrt(d_k)                # (..., L_q, L_k)\n    if mask is not None:\n        allowed = torch.as_tensor(mask) != 0                                 # broadcastable to scores\n        scores = scores.masked_fill(~allowed, float("-inf"))                 # (..., L_q, L_k)\n    return _softmax_last(scores)',
          '    rows = []\n    for i in range(query.shape[-2]):\n        scores = query @ key.transpose(-1, -2) / math.sqrt(d_k)            # all rows, for every row\n        if mask is not None:\n            scores = scores.masked_fill(~(torch.as_tensor(mask) != 0), float("-inf"))\n        rows.append(_softmax_last(scores[..., i:i + 1, :]))\n    return torch.cat(rows, dim=-2)')]
