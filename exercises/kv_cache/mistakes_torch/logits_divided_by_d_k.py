"""scores were divided by d_k instead of sqrt(d_k) (as when the 1/sqrt(d_k) scale is applied twice).

Must fail: prefill_decode
"""
PATCH = [("/ math.sqrt(self.d_k) ", "/ self.d_k ")]
