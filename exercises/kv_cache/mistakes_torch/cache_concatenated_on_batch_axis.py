"""the new keys and values were concatenated to the cache along axis 0 (the batch) instead of axis 2 (the tokens of (B, H, T, d_k)): a decode step raises on the size mismatch or attends over a doubled batch.

Must fail: prefill_decode

Source: https://github.com/deepspeedai/Megatron-DeepSpeed/pull/112
A review comment there shows transformer.py concatenating past_key with key_layer on dim 0, which fails for sizes [1, 5, 16, 64] and [1, 1, 16, 64] that can only be joined on the token dimension.
"""
PATCH = [("k = torch.cat([self.k_cache, k], dim=2)            # (B, H, T + L, d_k)", "k = torch.cat([self.k_cache, k], dim=0)"),
         ("v = torch.cat([self.v_cache, v], dim=2)            # (B, H, T + L, d_k)", "v = torch.cat([self.v_cache, v], dim=0)")]
