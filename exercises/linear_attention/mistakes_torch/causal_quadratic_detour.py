"""on the causal path the L x L matrix phi(Q) phi(K)^T was formed and its upper triangle masked: the values are right, but work and memory grow like L^2. Causal linear attention is prefix sums (or a running state) of phi(k_j) v_j^T and phi(k_j) over j <= i (Katharopoulos et al. 2020, eq. 10-12: the RNN view).

Must fail: flops_scaling, memory_scaling
"""
PATCH = [("""        S = torch.cumsum(phi_k.unsqueeze(-1) * v.unsqueeze(-2), dim=2)  # (B, H, L, d_k, d_v): S_i, j <= i
        z = torch.cumsum(phi_k, dim=2)                          # (B, H, L, d_k): z_i
        num = torch.einsum("bhld,bhlde->bhle", phi_q, S)        # (B, H, L, d_v)
        den = (phi_q * z).sum(dim=-1, keepdim=True)             # (B, H, L, 1)""",
          """        A = torch.tril(phi_q @ phi_k.transpose(-2, -1))         # (B, H, L, L): the masked detour
        num = A @ v                                             # (B, H, L, d_v)
        den = A.sum(dim=-1, keepdim=True)                       # (B, H, L, 1)""")]
