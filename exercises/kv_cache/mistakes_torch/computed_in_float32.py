"""every input was cast to float32 before computing (and the output and caches cast back), so float64 inputs lose their precision.

Must fail: float64
"""
PATCH = [("        B, L, D = x.shape\n        if D != self.d_model:",
          "        dt = x.dtype\n        x, W_q, W_k, W_v, W_o = (t.float() for t in (x, W_q, W_k, W_v, W_o))\n"
          "        B, L, D = x.shape\n        if D != self.d_model:"),
         ("k = torch.cat([self.k_cache, k], dim=2)", "k = torch.cat([self.k_cache.float(), k], dim=2)"),
         ("v = torch.cat([self.v_cache, v], dim=2)", "v = torch.cat([self.v_cache.float(), v], dim=2)"),
         ("self.k_cache, self.v_cache = k, v", "self.k_cache, self.v_cache = k.to(dt), v.to(dt)"),
         ("return y @ W_o", "return (y @ W_o).to(dt)")]
