"""the float64 encoding was returned; the contract asks for float32.

Must fail: dtype_float32
"""
PATCH = [('return pe.to(torch.float32)', 'return pe')]
