"""with causal=True, the state was summed again from the first key for every query (S_i = phi(K[:i+1])^T V[:i+1] and z_i at each position i): the values are right, but the causal path's work grows like L^2 d_k d_v instead of L d_k d_v (carry a running state, S_i = S_(i-1) + phi(k_i) v_i^T, or take prefix sums; the path without causal is fine).

Must fail: flops_scaling
"""
PATCH = [
    ('        S = np.cumsum(phi_k[..., :, None] * v[..., None, :], axis=2)  # (B, H, L, d_k, d_v): S_i, j <= i\n        z = np.cumsum(phi_k, axis=2)                            # (B, H, L, d_k): z_i\n        num = np.einsum("bhld,bhlde->bhle", phi_q, S)           # (B, H, L, d_v)\n        den = np.sum(phi_q * z, axis=-1, keepdims=True)         # (B, H, L, 1)',
     '        num = np.empty(v.shape, dtype=v.dtype)                  # (B, H, L, d_v)\n        den = np.empty(v.shape[:3] + (1,), dtype=v.dtype)       # (B, H, L, 1)\n        for i in range(phi_k.shape[2]):                         # the state of keys 0..i, summed again\n            S = np.swapaxes(phi_k[:, :, :i + 1], -1, -2) @ v[:, :, :i + 1]  # (B, H, d_k, d_v)\n            z = phi_k[:, :, :i + 1].sum(axis=2)                 # (B, H, d_k)\n            num[:, :, i] = (phi_q[:, :, i, None, :] @ S)[:, :, 0]\n            den[:, :, i] = (phi_q[:, :, i] * z).sum(axis=-1, keepdims=True)'),
]
