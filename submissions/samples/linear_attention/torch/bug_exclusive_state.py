"""Bug: the running state is read before token i is added, so query i attends to j < i only
(row 0 is 0 / 0).

Must fail: causal
Mistake: state_read_before_update
"""

import torch
import torch.nn.functional as F


def linear_attention(query, key, value, causal=False):
    if query.dim() != 4 or key.shape != query.shape or value.dim() != 4 or value.shape[:3] != query.shape[:3]:
        raise ValueError("bad shapes")
    dtype = query.dtype
    work = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
    q, k, v = F.elu(query.to(work)) + 1, F.elu(key.to(work)) + 1, value.to(work)
    if not causal:
        return ((q @ (k.transpose(2, 3) @ v)) / (q @ k.sum(2).unsqueeze(-1))).to(dtype)
    B, H, L, d = q.shape
    S = torch.zeros(B, H, d, v.shape[-1], dtype=work)
    z = torch.zeros(B, H, d, dtype=work)
    rows = []
    for i in range(L):
        rows.append(torch.einsum("bhd,bhde->bhe", q[:, :, i], S) / torch.einsum("bhd,bhd->bh", q[:, :, i], z).unsqueeze(-1))
        S = S + torch.einsum("bhd,bhe->bhde", k[:, :, i], v[:, :, i])
        z = z + k[:, :, i]
    return torch.stack(rows, 2).to(dtype)
