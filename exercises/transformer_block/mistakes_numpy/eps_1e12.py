"""LayerNorm used eps = 1e-12 (BERT's layer_norm_eps); this block's LayerNorm adds eps = 1e-5 to the variance inside the square root.

Must fail: layer_norm_scale
"""
PATCH = [('def layer_norm(x, weight, bias, eps=EPS):', 'def layer_norm(x, weight, bias, eps=1e-12):')]
