"""the scores were multiplied by sqrt(d_k) instead of divided by it (as when they are divided by the scale d_k ** -0.5 instead of multiplied by it): d_k times too large instead of normalised.

Must fail: weights_basic, scaling

Source: https://github.com/esceptico/perceiver-io/issues/9
The issue shows MultiHeadAttention defining self.scale = self.qk_head_dim ** -0.5 and then computing q @ k.transpose(-2, -1) / self.scale; the author called it a dumb mistake and fixed it.
"""
PATCH = [("scores = query @ key.transpose(-1, -2) / math.sqrt(d_k)", "scores = query @ key.transpose(-1, -2) / (d_k ** -0.5)")]
