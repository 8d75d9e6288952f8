"""scores were scaled by 1/sqrt(d_model) instead of 1/sqrt(d_k), the width of one head.

Must fail: prefill_decode
"""
PATCH = [("/ math.sqrt(self.d_k) ", "/ math.sqrt(self.d_model) ")]
