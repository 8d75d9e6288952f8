"""LayerNorm took its mean and variance over the sequence axis; it normalises each token over the last axis (the D features).

Must fail: values
"""
PATCH = [('mean = x.mean(axis=-1, keepdims=True)', 'mean = x.mean(axis=-2, keepdims=True)'), ('var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)', 'var = ((x - mean) ** 2).mean(axis=-2, keepdims=True)')]
