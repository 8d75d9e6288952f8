"""sin and cos were swapped: the result is x * cos(theta) + rotate_half(x) * sin(theta).

Must fail: values
"""
PATCH = [('cos, sin = emb.cos(), emb.sin()', 'cos, sin = emb.sin(), emb.cos()')]
