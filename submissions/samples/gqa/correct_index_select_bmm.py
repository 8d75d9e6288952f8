"""Correct: KV heads gathered for each query head with index_select(arange(H_q) // group), heads folded into batch for bmm; half inputs computed in float32 and cast back."""
import math
import torch


def grouped_query_attention(x, W_q, W_k, W_v, W_o, num_query_heads, num_kv_heads, mask=None):
    B, L, D = x.shape
    Hq, Hkv = num_query_heads, num_kv_heads
    if Hq <= 0 or D % Hq != 0 or Hkv <= 0 or Hq % Hkv != 0:
        raise ValueError(f"bad head counts: D={D}, H_q={Hq}, H_kv={Hkv}")
    dk = D // Hq
    out_dtype = x.dtype
    ct = torch.float32 if out_dtype in (torch.float16, torch.bfloat16) else out_dtype
    x, W_q, W_k, W_v, W_o = (t.to(ct) for t in (x, W_q, W_k, W_v, W_o))
    q = (x @ W_q).view(B, L, Hq, dk).transpose(1, 2)
    k = (x @ W_k).view(B, L, Hkv, dk).transpose(1, 2)
    v = (x @ W_v).view(B, L, Hkv, dk).transpose(1, 2)
    idx = torch.arange(Hq, device=x.device) // (Hq // Hkv)
    k = k.index_select(1, idx)
    v = v.index_select(1, idx)
    s = torch.bmm(q.reshape(B * Hq, L, dk), k.reshape(B * Hq, L, dk).transpose(1, 2)).view(B, Hq, L, L)
    s = s / math.sqrt(dk)
    if mask is not None:
        allowed = torch.broadcast_to(mask.bool(), s.shape)
        s = s.masked_fill(allowed.logical_not(), -math.inf)
        mx = s.amax(-1, keepdim=True)
        mx = torch.where(torch.isfinite(mx), mx, torch.zeros_like(mx))
        e = torch.exp(s - mx)
        z = e.sum(-1, keepdim=True)
        p = e / torch.where(z == 0, torch.ones_like(z), z)
    else:
        p = torch.softmax(s, -1)
    y = torch.bmm(p.reshape(B * Hq, L, L), v.reshape(B * Hq, L, dk)).view(B, Hq, L, dk)
    return (y.transpose(1, 2).reshape(B, L, D) @ W_o).to(out_dtype)
