"""the float64 encoding was returned; the contract asks for float32.

Must fail: dtype_float32
"""
PATCH = [('return pe.astype(np.float32)', 'return pe')]
