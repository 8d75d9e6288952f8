"""the offset was ignored: row r encodes position offset + r, not r.

Must fail: offset
"""
PATCH = [('p = offset + np.arange(seq_len, dtype=np.float64)', 'p = np.arange(seq_len, dtype=np.float64)')]
