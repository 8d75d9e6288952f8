"""the causal mask hid the diagonal (key j visible only when j < i + L_k - L_q); query i sees every key j <= i + L_k - L_q, its own position included.

Must fail: causal
"""
PATCH = [('s = np.where(cols > rows + offset, -np.inf, s)', 's = np.where(cols >= rows + offset, -np.inf, s)')]
