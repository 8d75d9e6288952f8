"""with a mask, keys outside the window that the mask allows were attended (later ones too, when causal) and masked keys inside the window were not hidden: a key was kept when it lies in the window OR the mask allows it. A key is attended only when it lies in the window AND the mask allows it.

Must fail: masks, fully_masked_rows

Source: https://github.com/NVIDIA/TransformerEngine/pull/1271
The pull request points out that get_swa_mask combined the caller's attention_mask with the sliding-window mask by logical_and while True meant 'masked out', so only keys hidden by both were hidden, and proposes logical_or; #1281, which says it fixes it, rewrote the combination.
"""
PATCH = [
    ("    k, v = key.to(work), value.to(work)                         # (B, H, L_k, d_k), (B, H, L_k, d_v)\n",
     "    k, v = key.to(work), value.to(work)                         # (B, H, L_k, d_k), (B, H, L_k, d_v)\n"
     "    if mask is not None:  # dense: the window OR the mask (a key either allows is kept)\n"
     "        p_ = (torch.arange(L_q) + (L_k - L_q)).view(L_q, 1)\n"
     "        j_ = torch.arange(L_k).view(1, L_k)\n"
     "        band = ((j_ <= p_) & (j_ > p_ - window)) if causal else ((p_ - j_).abs() < window)  # (L_q, L_k)\n"
     "        either = band | (mask != 0)                              # (B|1, H|1, L_q, L_k)\n"
     "        sd = (q @ k.transpose(-2, -1)).masked_fill(~either, float('-inf'))  # (B, H, L_q, L_k)\n"
     "        md = sd.amax(dim=-1, keepdim=True)\n"
     "        md = torch.where(torch.isfinite(md), md, torch.zeros_like(md))\n"
     "        ed = torch.exp(sd - md)\n"
     "        zd = ed.sum(dim=-1, keepdim=True)\n"
     "        return ((ed / torch.where(zd > 0, zd, torch.ones_like(zd))) @ v).to(query.dtype)\n"),
]
