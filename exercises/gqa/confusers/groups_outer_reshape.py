"""Confuser: no repeat/repeat_interleave at all: the query heads are reshaped as (group, H_kv) instead
of (H_kv, group) and broadcast against K/V unsqueezed at the group axis; so head h meets KV head
h % H_kv through a reshape order, not through `repeat`.

The mapping sentence (hint and bank) now states the mapping the replay proves, h % num_kv_heads, and
names repeat only as what gives it.

Must not name: "mapped to key/value heads with `repeat`", "were mapped to query heads with repeat"
May name: heads_mapped_with_repeat, "used KV head h % num_kv_heads"
"""
import torch


def grouped_query_attention(x, W_q, W_k, W_v, W_o, num_query_heads, num_kv_heads, mask=None):
    B, L, D = x.shape
    if D % num_query_heads:
        raise ValueError("D must be divisible by num_query_heads")
    if num_query_heads % num_kv_heads:
        raise ValueError("num_query_heads must be divisible by num_kv_heads")
    Hq, Hkv = num_query_heads, num_kv_heads
    g, dk = Hq // Hkv, D // Hq
    q = (x @ W_q).reshape(B, L, g, Hkv, dk).permute(0, 3, 2, 1, 4)     # (B, Hkv, g, L, dk)
    k = (x @ W_k).reshape(B, L, Hkv, dk).permute(0, 2, 1, 3).unsqueeze(2)
    v = (x @ W_v).reshape(B, L, Hkv, dk).permute(0, 2, 1, 3).unsqueeze(2)
    s = q @ k.transpose(-1, -2) / dk ** 0.5                               # (B, Hkv, g, L, L)
    if mask is not None:
        m = torch.broadcast_to(mask, (B, Hq, L, L)).reshape(B, g, Hkv, L, L).transpose(1, 2) != 0
        s = s.masked_fill(~m, float("-inf"))
    mx = s.amax(-1, keepdim=True)
    mx = torch.where(torch.isfinite(mx), mx, torch.zeros_like(mx))
    e = torch.exp(s - mx)
    tot = e.sum(-1, keepdim=True)
    p = e / torch.where(tot > 0, tot, torch.ones_like(tot))
    y = (p @ v).permute(0, 3, 2, 1, 4).reshape(B, L, D)                 # (B, L, g, Hkv, dk)
    return y @ W_o
