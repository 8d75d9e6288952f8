"""the causal mask has shape (seq_len, kv_len), without the two leading axes: it must be (1, 1, seq_len, kv_len) so that it broadcasts against (B, H, L_q, L_k) scores.

Must fail: causal_square
"""
PATCH = [("    return mask[None, None, :, :]                            # (1, 1, L_q, L_k)",
          "    return mask")]
