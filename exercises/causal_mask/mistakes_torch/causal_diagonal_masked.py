"""the diagonal is masked (j < i): a query may attend to its own position.

Must fail: causal_square
"""
PATCH = [("mask = j <= i + offset ", "mask = j < i + offset ")]
