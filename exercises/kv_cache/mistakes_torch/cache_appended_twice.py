"""every new token was appended to the cache twice, so the cache grows by 2 L per call and every cached key is attended twice.

Must fail: prefill_decode
"""
PATCH = [("k = torch.cat([self.k_cache, k], dim=2) ", "k = torch.cat([self.k_cache, k, k], dim=2) "),
         ("v = torch.cat([self.v_cache, v], dim=2) ", "v = torch.cat([self.v_cache, v, v], dim=2) ")]
