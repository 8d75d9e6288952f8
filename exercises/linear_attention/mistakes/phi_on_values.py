"""the feature map was applied to the values too: phi acts on queries and keys only (the kernel sim(q, k) = phi(q)^T phi(k)); the values enter as they are, S = sum_j phi(k_j) v_j^T.

Must fail: values
"""
PATCH = [("    phi_q, phi_k = _phi(q), _phi(k)                             # (B, H, L, d_k), > 0\n",
          "    phi_q, phi_k = _phi(q), _phi(k)                             # (B, H, L, d_k), > 0\n    v = _phi(v)\n")]
