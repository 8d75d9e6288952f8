"""with a mask, the scores are built one query row at a time, and each row's pass recomputes the whole q @ k^T of every head and masks it to keep one row, so with a mask the work grows like seq_len^3 instead of seq_len^2 (compute and mask the scores of all rows at once).

Wasteful on the masked path only: without a mask the cost is the reference's, so a probe that measured
unmasked calls alone would pass it.

Must fail: flops_scaling
"""
PATCH = [(
    """        att = np.where(np.asarray(mask) != 0, att, -np.inf)           # (B, H, L_q, L_k)""",
    """        rows = []
        for i in range(L_q):                                          # one query row at a time ...
            full = q @ k.transpose(0, 1, 3, 2) / np.asarray(math.sqrt(d_k), dtype=query.dtype)  # all rows
            rows.append(np.where(np.asarray(mask) != 0, full, -np.inf)[..., i:i + 1, :])
        att = np.concatenate(rows, axis=-2)                           # (B, H, L_q, L_k)""")]
