"""the whole score matrix Q K^T is recomputed for every query row and only that row is kept, so the work grows like seq_len^3 instead of seq_len^2 (compute it once and take the softmax of every row together).

Must fail: work_scaling
"""
PATCH = [(
    """    scores = query @ np.swapaxes(key, -1, -2) / math.sqrt(d_k)     # (..., L_q, L_k)
    if mask is not None:
        allowed = np.asarray(mask) != 0                             # broadcastable to scores
        scores = np.where(allowed, scores, -np.inf)                 # (..., L_q, L_k)
    return _softmax_last(scores).astype(query.dtype, copy=False)""",
    """    rows = []
    for i in range(query.shape[-2]):
        scores = query @ np.swapaxes(key, -1, -2) / math.sqrt(d_k)     # all rows, for every row
        if mask is not None:
            scores = np.where(np.asarray(mask) != 0, scores, -np.inf)
        rows.append(_softmax_last(scores[..., i:i + 1, :]))
    return np.concatenate(rows, axis=-2).astype(query.dtype, copy=False)""")]
