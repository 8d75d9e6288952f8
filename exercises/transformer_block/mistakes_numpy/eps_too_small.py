"""LayerNorm used an eps much smaller than 1e-5 (BERT's layer_norm_eps of 1e-12, or 1e-6): this block's LayerNorm adds eps = 1e-5 to the variance inside the square root, which shows where the variance is small.

Must fail: layer_norm_scale
"""
PATCH = [('def layer_norm(x, weight, bias, eps=EPS):', 'def layer_norm(x, weight, bias, eps=1e-12):')]
