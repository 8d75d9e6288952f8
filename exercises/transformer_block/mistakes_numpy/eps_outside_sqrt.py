"""eps was added outside the square root, (x - mean) / (sqrt(var) + eps); LayerNorm divides by sqrt(var + eps).

Must fail: layer_norm_scale
"""
PATCH = [("np.sqrt(var + eps)", "(np.sqrt(var) + eps)")]
