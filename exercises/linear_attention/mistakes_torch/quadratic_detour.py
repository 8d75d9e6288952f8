"""the L x L matrix phi(Q) phi(K)^T was formed and normalised row by row: the values are right (it is the quadratic form the kernel trick regroups), but work and memory grow like L^2. Sum over the keys first, S = phi(K)^T V and z = sum_j phi(k_j), then multiply by phi(q_i) (Katharopoulos et al. 2020, eq. 5-6).

Must fail: flops_scaling, memory_scaling
"""
PATCH = [("""        S = phi_k.transpose(-2, -1) @ v                         # (B, H, d_k, d_v)
        z = phi_k.sum(dim=2)                                    # (B, H, d_k)
        num = phi_q @ S                                         # (B, H, L, d_v)
        den = phi_q @ z.unsqueeze(-1)                           # (B, H, L, 1)""",
          """        A = phi_q @ phi_k.transpose(-2, -1)                     # (B, H, L, L): the detour
        num = A @ v                                             # (B, H, L, d_v)
        den = A.sum(dim=-1, keepdim=True)                       # (B, H, L, 1)""")]
