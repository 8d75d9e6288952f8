"""query i saw keys j < i, not j <= i (an exclusive prefix sum, as when the causal state is read before token i is added to it); in the RNN view (Katharopoulos et al. 2020, eq. 10-12) S_i = S_(i-1) + phi(k_i) v_i^T comes first, then out_i = phi(q_i)^T S_i / phi(q_i)^T z_i (and row 0 sees no key at all).

Must fail: causal

Source: https://github.com/open-lm-engine/lm-engine/pull/496
A review of the pull request flags its token-by-token linear attention reference, which computes
y[:, s] = q[:, s] @ h0 before h0 = h0 + k[:, s] v[:, s]^T: each query reads the state before its own
token is added, so token s never attends to itself.
"""
PATCH = [("        S = torch.cumsum(phi_k.unsqueeze(-1) * v.unsqueeze(-2), dim=2)  # (B, H, L, d_k, d_v): S_i, j <= i\n"
          "        z = torch.cumsum(phi_k, dim=2)                          # (B, H, L, d_k): z_i\n",
          "        kv = phi_k.unsqueeze(-1) * v.unsqueeze(-2)\n"
          "        S = torch.cumsum(kv, dim=2) - kv                         # j < i: read before the update\n"
          "        z = torch.cumsum(phi_k, dim=2) - phi_k\n")]
