"""on the causal path the running key sum z of the denominator was cut from the graph (computed from detached keys): the values are right, but the gradient with respect to key misses the denominator's share.

Must fail: gradients

Source: https://github.com/fla-org/flash-linear-attention/pull/875
The pull request fixes normalized linear attention whose k_cum = chunk_global_cumsum(k) had no grad_fn, severing k -> k_cum -> denominator, so the gradient with respect to k was wrong while the forward pass, dq and dv were right.
"""
PATCH = [("z = torch.cumsum(phi_k, dim=2)                          # (B, H, L, d_k): z_i",
          "z = torch.cumsum(phi_k.detach(), dim=2)                 # (B, H, L, d_k): z_i, detached")]
