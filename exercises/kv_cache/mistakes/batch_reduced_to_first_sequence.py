"""written for one sequence: only x[0] is attended and a batch of 1 is returned, so the other sequences of a batch are dropped.

Must fail: batch
"""
PATCH = [("        B, L, D = x.shape\n        if D != self.d_model:", "        x = x[:1]\n        B, L, D = x.shape\n        if D != self.d_model:")]
