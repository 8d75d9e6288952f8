"""LayerNorm added much less than 1e-5 to the variance inside the square root (an eps such as BERT's layer_norm_eps of 1e-12 or 1e-6, or eps = 1e-5 squared): this block's LayerNorm adds eps = 1e-5 itself, which shows where the variance is small.

Must fail: layer_norm_scale
"""
PATCH = [('def layer_norm(x, weight, bias, eps=EPS):', 'def layer_norm(x, weight, bias, eps=1e-12):')]
