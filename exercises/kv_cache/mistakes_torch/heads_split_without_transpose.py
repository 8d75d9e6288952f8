"""heads were split with a plain reshape to (B, H, L, d_k) (and merged back with a plain reshape) instead of reshape(B, L, H, d_k) then transpose, which mixes positions and features across heads.

Must fail: prefill_decode, batch
"""
PATCH = [("return t.reshape(B, L, self.num_heads, self.d_k).transpose(1, 2)",
          "return t.reshape(B, self.num_heads, L, self.d_k)"),
         ("y = y.transpose(1, 2).reshape(B, L, D) ", "y = y.reshape(B, L, D) ")]
