"""the causal mask is additive (0.0 where allowed, -inf where masked), the convention of nn.Transformer's attn_mask: this API asks for a boolean mask, True = may attend.

Must fail: causal_square
"""
PATCH = [("    return mask[None, None, :, :]                            # (1, 1, L_q, L_k)",
          "    return np.where(mask, 0.0, -np.inf)[None, None, :, :]"),
         ("    causal = create_causal_mask(L)                           # (1, 1, L, L)",
          "    causal = create_causal_mask(L) == 0")]
