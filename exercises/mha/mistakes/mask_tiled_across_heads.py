"""with the heads flattened into the batch sample-major (index b * H + h), the per-sample mask was repeated with .repeat(H, 1, 1), which tiles it ([M0, M1, M0, M1]) instead of repeating each sample's mask H times ([M0, M0, M1, M1]): heads attend with another sample's padding mask (repeat_interleave, or broadcast a (B, 1, L_q, L_k) mask).

Must fail: padding_mask

Source: https://github.com/line/lighthouse/pull/77
The pull request shows a 3-D attn_mask built with .repeat(nhead, 1, 1) for scores indexed batch_idx * num_heads + head_idx, so "heads then attend using the wrong sample's padding mask"; fixed with repeat_interleave.
"""
PATCH = [("keep = mask != 0                                      # broadcasts to (B, H, L_q, L_k)",
          "keep = torch.broadcast_to(mask != 0, (B, H, L_q, L_k))[:, 0].repeat(H, 1, 1).view(B, H, L_q, L_k)")]
