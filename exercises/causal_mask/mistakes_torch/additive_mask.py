"""the masks are additive float masks (0.0 where allowed, -inf where masked), the convention of nn.Transformer's attn_mask: this API asks for boolean masks, True = may attend.

Must fail: causal_square, padding_mask
"""
PATCH = [("    return mask[None, None, :, :]                            # (1, 1, L_q, L_k)",
          "    return torch.zeros(mask.shape).masked_fill(~mask, float(\"-inf\"))[None, None, :, :]"),
         ("    return keep[:, None, None, :] ",
          "    return torch.zeros(keep.shape).masked_fill(~keep, float(\"-inf\"))[:, None, None, :] "),
         ("return causal & padding ", "return causal + padding ")]
