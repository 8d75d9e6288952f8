"""the second LayerNorm used ln1_weight and ln1_bias (a copy-paste slip); LN2 has its own parameters, ln2_weight and ln2_bias.

Must fail: values
"""
PATCH = [('layer_norm(h, p["ln2_weight"], p["ln2_bias"])', 'layer_norm(h, p["ln1_weight"], p["ln1_bias"])')]
