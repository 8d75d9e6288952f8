"""the positions started at 1 (arange(1, seq_len + 1)): row r encodes position offset + r, so row 0 of an encoding without offset is position 0 (sin 0 = 0, cos 0 = 1).

Must fail: values, offset
"""
PATCH = [('p = offset + np.arange(seq_len, dtype=np.float64)', 'p = offset + 1 + np.arange(seq_len, dtype=np.float64)')]
