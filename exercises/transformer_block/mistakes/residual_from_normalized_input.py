"""the residual stream was replaced by its normalised copy before each sub-layer (x = LN(x); x = x + sublayer(x)), so the block returns LN1(x) + MHA(LN1(x)) and adds the FFN to LN2(h): pre-LN keeps the raw input on the residual path, h = x + MHA(LN1(x)), out = h + FFN(LN2(h)).

Must fail: values

Source: https://github.com/pytorch/pytorch/issues/61165
The issue shows nn.TransformerEncoderLayer's first norm_first implementation running src = self.norm1(src) before src = src + self_attn(src), which does not keep a copy of the input for the residual (the same bug as Howuhh/faster-trajectory-transformer#3).
"""
PATCH = [('h = x + attention(layer_norm(x, p["ln1_weight"], p["ln1_bias"]), num_heads,',
          'x = layer_norm(x, p["ln1_weight"], p["ln1_bias"])\n    h = x + attention(x, num_heads,'),
         ('f = gelu(layer_norm(h, p["ln2_weight"], p["ln2_bias"]) @ p["W_1"] + p["b_1"])  # (B, L, d_ff)',
          'h = layer_norm(h, p["ln2_weight"], p["ln2_bias"])\n    f = gelu(h @ p["W_1"] + p["b_1"])  # (B, L, d_ff)')]
