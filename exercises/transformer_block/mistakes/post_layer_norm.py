"""the block was post-LN (h = LN1(x + MHA(x)), out = LN2(h + FFN(h)), the 2017 Transformer layout); this exercise asks for pre-LN: h = x + MHA(LN1(x)), out = h + FFN(LN2(h)).

Must fail: values
"""
PATCH = [("    h = x + attention(layer_norm(x, p[\"ln1_weight\"], p[\"ln1_bias\"]), num_heads,\n"
          "                      p[\"W_q\"], p[\"W_k\"], p[\"W_v\"], p[\"W_o\"], mask)  # (B, L, D)\n"
          "    f = gelu(layer_norm(h, p[\"ln2_weight\"], p[\"ln2_bias\"]) @ p[\"W_1\"] + p[\"b_1\"])  # (B, L, d_ff)\n"
          "    return h + f @ p[\"W_2\"] + p[\"b_2\"] ",
          "    h = layer_norm(x + attention(x, num_heads, p[\"W_q\"], p[\"W_k\"], p[\"W_v\"], p[\"W_o\"], mask),\n"
          "                   p[\"ln1_weight\"], p[\"ln1_bias\"])\n"
          "    f = gelu(h @ p[\"W_1\"] + p[\"b_1\"])\n"
          "    return layer_norm(h + f @ p[\"W_2\"] + p[\"b_2\"], p[\"ln2_weight\"], p[\"ln2_bias\"]) ")]
