"""on the causal path the running key sum z was a cumulative sum over the heads axis instead of the sequence axis, so each row is normalised by keys of other heads at its own position instead of by phi(q_i)^T sum_{j <= i} phi(k_j).

Must fail: causal

Source: https://github.com/fla-org/flash-linear-attention/pull/594
The pull request fixes normalize_output, which computed k.cumsum(-2) on a [B, T, H, K] tensor, the heads dimension, instead of the sequence dimension (k.cumsum(1)).
"""
PATCH = [("z = torch.cumsum(phi_k, dim=2)                          # (B, H, L, d_k): z_i",
          "z = torch.cumsum(phi_k, dim=1)                          # cumsum over the heads axis")]
