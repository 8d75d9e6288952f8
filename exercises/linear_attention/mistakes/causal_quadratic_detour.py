"""on the causal path the L x L matrix phi(Q) phi(K)^T was formed and its upper triangle masked: the values are right, but work and memory grow like L^2. Causal linear attention is prefix sums (or a running state) of phi(k_j) v_j^T and phi(k_j) over j <= i (Katharopoulos et al. 2020, eq. 10-12: the RNN view).

Must fail: flops_scaling, memory_scaling
"""
PATCH = [("""        S = np.cumsum(phi_k[..., :, None] * v[..., None, :], axis=2)  # (B, H, L, d_k, d_v): S_i, j <= i
        z = np.cumsum(phi_k, axis=2)                            # (B, H, L, d_k): z_i
        num = np.einsum("bhld,bhlde->bhle", phi_q, S)           # (B, H, L, d_v)
        den = np.sum(phi_q * z, axis=-1, keepdims=True)         # (B, H, L, 1)""",
          """        A = np.tril(phi_q @ np.swapaxes(phi_k, -1, -2))         # (B, H, L, L): the masked detour
        num = A @ v                                             # (B, H, L, d_v)
        den = A.sum(axis=-1, keepdims=True)                     # (B, H, L, 1)""")]
