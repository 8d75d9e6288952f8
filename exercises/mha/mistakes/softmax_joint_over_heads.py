"""the softmax was taken jointly over all heads and keys of a query (the scores flattened to (B, L_q, H * L_k) before it), so each query's weights sum to 1 across all heads together instead of within every head.

Must fail: self_attention, cross_attention

Source: https://github.com/facebookresearch/detr/issues/247
The issue shows DETR's MHAttention computing F.softmax(weights.flatten(2), dim=-1) over heads and positions together; the maintainer confirmed the softmax must be per head (flatten(3)) and that the fix improved results.
"""
PATCH = [("att = torch.where(keep, F.softmax(att, dim=-1), 0.0)",
          "att = torch.where(keep, F.softmax(att.transpose(1, 2).flatten(2), dim=-1).view(B, L_q, H, L_k).transpose(1, 2), 0.0)"),
         ("att = F.softmax(att, dim=-1)                          # (B, H, L_q, L_k)",
          "att = F.softmax(att.transpose(1, 2).flatten(2), dim=-1).view(B, L_q, H, L_k).transpose(1, 2)")]
