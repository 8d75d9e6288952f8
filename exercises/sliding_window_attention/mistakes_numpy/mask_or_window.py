"""with a mask, keys outside the window that the mask allows were attended (later ones too, when causal) and masked keys inside the window were not hidden: a key was kept when it lies in the window OR the mask allows it. A key is attended only when it lies in the window AND the mask allows it.

Must fail: masks, fully_masked_rows

Source: https://github.com/NVIDIA/TransformerEngine/pull/1271
The pull request points out that get_swa_mask combined the caller's attention_mask with the sliding-window mask by logical_and while True meant 'masked out', so only keys hidden by both were hidden, and proposes logical_or; #1281, which says it fixes it, rewrote the combination.
"""
PATCH = [
    ("    k, v = key.astype(work), value.astype(work)                 # (B, H, L_k, d_k), (B, H, L_k, d_v)\n",
     "    k, v = key.astype(work), value.astype(work)                 # (B, H, L_k, d_k), (B, H, L_k, d_v)\n"
     "    if mask is not None:  # dense: the window OR the mask (a key either allows is kept)\n"
     "        p_ = (np.arange(L_q) + (L_k - L_q))[:, None]\n"
     "        j_ = np.arange(L_k)[None, :]\n"
     "        inband = ((j_ <= p_) & (j_ > p_ - window)) if causal else (np.abs(p_ - j_) < window)  # (L_q, L_k)\n"
     "        either = inband | (np.asarray(mask) != 0)                # (B|1, H|1, L_q, L_k)\n"
     "        sd = np.where(either, q @ np.swapaxes(k, -1, -2), -np.inf)  # (B, H, L_q, L_k)\n"
     "        md = sd.max(axis=-1, keepdims=True)\n"
     "        md = np.where(np.isfinite(md), md, 0)\n"
     "        ed = np.exp(sd - md)\n"
     "        zd = ed.sum(axis=-1, keepdims=True)\n"
     "        return ((ed / np.where(zd > 0, zd, 1)) @ v).astype(query.dtype)\n"),
]
