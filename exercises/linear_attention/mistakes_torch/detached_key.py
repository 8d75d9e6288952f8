"""the keys were detached from the graph (phi(key.detach())): the values are right, but no gradient reaches key; keep the whole computation in torch operations on the given tensors.

Must fail: gradients
"""
PATCH = [("    phi_q, phi_k = _phi(q), _phi(k)                             # (B, H, L, d_k), > 0\n",
          "    phi_q, phi_k = _phi(q), _phi(k.detach())                    # (B, H, L, d_k), > 0\n")]
