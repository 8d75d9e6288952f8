"""sin and cos were swapped: the result is x * cos(theta) + rotate_half(x) * sin(theta).

Must fail: values
"""
PATCH = [('cos, sin = np.cos(emb), np.sin(emb)', 'cos, sin = np.sin(emb), np.cos(emb)')]
