"""the mask allows the future and hides the past (the upper triangle instead of the lower one).

Must fail: causal_square
"""
PATCH = [("mask = j <= i + offset ", "mask = j >= i + offset ")]
