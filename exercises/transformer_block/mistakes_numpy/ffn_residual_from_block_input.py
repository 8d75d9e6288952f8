"""the feed-forward residual added the block's input x instead of h = x + MHA(LN1(x)): out = x + FFN(LN2(h)), so the attention output reaches the result only through the FFN; the second residual adds h.

Must fail: values

Source: https://github.com/strutive07/transformer-tensorflow2.0/issues/14
The issue shows the encoder's feed-forward block computing layer_norm_2(tf.add(inputs, output)) with the layer's inputs instead of the attention sub-layer's output; the maintainer fixed it.
"""
PATCH = [('return (h + f @ p["W_2"] + p["b_2"]).astype(x.dtype)', 'return (x + f @ p["W_2"] + p["b_2"]).astype(x.dtype)')]
