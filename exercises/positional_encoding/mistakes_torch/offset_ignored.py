"""the offset was ignored: row r encodes position offset + r, not r.

Must fail: offset
"""
PATCH = [('p = torch.arange(offset, offset + seq_len, dtype=torch.float64)', 'p = torch.arange(0, seq_len, dtype=torch.float64)')]
