"""the encoding was returned transposed, (d_model, seq_len); it is (seq_len, d_model): one row per position.

Must fail: values, zero_length
"""
PATCH = [('return pe.astype(np.float32)', 'return pe.T.astype(np.float32)')]
