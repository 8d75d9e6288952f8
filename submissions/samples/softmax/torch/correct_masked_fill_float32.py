import torch
def softmax(x, axis=-1):
    orig = x.dtype
    z = x.float() if orig in (torch.float16, torch.bfloat16) else x
    allneg = torch.isneginf(z).all(dim=axis, keepdim=True)
    z = z.masked_fill(allneg, 0.0)
    m = torch.max(z, dim=axis, keepdim=True).values
    e = torch.exp(z - m)
    out = e / e.sum(dim=axis, keepdim=True)
    out = out.masked_fill(allneg, 0.0)
    return out.to(orig)
