"""the scores were exponentiated without subtracting the running max: exp overflows to inf for scores in the hundreds (float32 above about 88), and the output becomes inf / inf = NaN; subtract the running max m from each block's scores and rescale the sum and output by exp(m_old - m_new).

Must fail: large_scores
"""
PATCH = [
    ("m_safe = np.where(np.isfinite(m_new), m_new, 0)", "m_safe = np.zeros_like(m_new)"),
    ("alpha = np.exp(m - m_safe)", "alpha = np.ones_like(m)"),
]
