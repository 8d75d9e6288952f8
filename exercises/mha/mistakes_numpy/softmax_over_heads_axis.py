"""the softmax was taken over axis 1, which for the (B, H, L_q, L_k) scores is the heads axis (a softmax written for 3-D (B, L_q, L_k) scores): weights sum to 1 across heads instead of across keys; normalise over the last axis.

Must fail: self_attention, cross_attention

Source: https://github.com/FudanNLP/fastNLP/issues/254
The issue reports that fastNLP's DotAttention applied its softmax with dim=1 instead of dim=-1, which is wrong for 4-D multi-head scores; the maintainers agreed to change it.
"""
PATCH = [("att = _softmax_last(att)                                          # (B, H, L_q, L_k)",
          "att = np.moveaxis(_softmax_last(np.moveaxis(att, 1, -1)), -1, 1)  # over the heads axis")]
