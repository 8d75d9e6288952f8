"""the caller's x was changed in place (e.g. the attention residual added into it: h = x; h += ...): the output is right, but x changed; build h as a new array.

Must fail: inputs_unchanged
"""
PATCH = [('    h = x + attention(layer_norm(x, p["ln1_weight"], p["ln1_bias"]), num_heads,\n                      p["W_q"], p["W_k"], p["W_v"], p["W_o"], mask)', '    h = x\n    h += attention(layer_norm(x, p["ln1_weight"], p["ln1_bias"]), num_heads,\n                   p["W_q"], p["W_k"], p["W_v"], p["W_o"], mask)')]
