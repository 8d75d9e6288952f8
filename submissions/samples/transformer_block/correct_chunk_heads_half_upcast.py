"""Correct: half inputs upcast to float32 for the whole block and cast back; heads by torch.chunk in a loop; GELU written with torch.erf; fully masked rows zeroed by torch.where on the weights."""
import math
import torch


def transformer_block(x, params, num_heads, mask=None):
    B, L, D = x.shape
    if num_heads < 1 or D % num_heads:
        raise ValueError(f"D={D} not divisible by {num_heads} heads")
    odt = x.dtype
    cdt = torch.float32 if odt in (torch.float16, torch.bfloat16) else odt
    P = {name: t.to(cdt) for name, t in params.items()}
    x = x.to(cdt)

    def ln(t, w, b):
        mu = t.mean(-1, keepdim=True)
        c = t - mu
        return c / torch.sqrt((c * c).mean(-1, keepdim=True) + 1e-5) * w + b

    a = ln(x, P["ln1_weight"], P["ln1_bias"])
    qs = torch.chunk(a @ P["W_q"], num_heads, dim=-1)
    ks = torch.chunk(a @ P["W_k"], num_heads, dim=-1)
    vs = torch.chunk(a @ P["W_v"], num_heads, dim=-1)
    keep = None if mask is None else torch.broadcast_to(mask.bool(), (B, num_heads, L, L))
    heads = []
    for i, (q, k, v) in enumerate(zip(qs, ks, vs)):
        s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
        if keep is not None:
            s = s.masked_fill(~keep[:, i], -1e30 if cdt != torch.float64 else -1e300)
            w = torch.where(keep[:, i].any(-1, keepdim=True), torch.softmax(s, -1), torch.zeros_like(s))
        else:
            w = torch.softmax(s, -1)
        heads.append(w @ v)
    h = x + torch.cat(heads, -1) @ P["W_o"]
    z = ln(h, P["ln2_weight"], P["ln2_bias"]) @ P["W_1"] + P["b_1"]
    z = z * 0.5 * (1 + torch.erf(z * (1 / math.sqrt(2))))
    return (h + z @ P["W_2"] + P["b_2"]).to(odt)
