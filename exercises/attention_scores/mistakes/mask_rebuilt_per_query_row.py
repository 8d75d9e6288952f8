"""the mask is applied one query row at a time, and each row's pass rebuilds the whole masked (L_q, L_k) score matrix to keep one row of it, so with a mask the work grows like seq_len^3 instead of seq_len^2 (apply the mask to all rows at once: one np.where over the scores).

Wasteful on the masked path only: without a mask the cost is the reference's, so a probe that measured
unmasked calls alone would pass it.

Must fail: work_scaling
"""
PATCH = [(
    """        allowed = np.asarray(mask) != 0                             # broadcastable to scores
        scores = np.where(allowed, scores, -np.inf)                 # (..., L_q, L_k)""",
    """        allowed = np.asarray(mask) != 0                             # broadcastable to scores
        rows = []
        for i in range(scores.shape[-2]):                           # one query row at a time ...
            masked = np.where(allowed, scores, -np.inf)             # ... masking every row each time
            rows.append(masked[..., i:i + 1, :].copy())
        scores = np.concatenate(rows, axis=-2)                      # (..., L_q, L_k)""")]
