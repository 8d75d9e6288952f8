"""the output projection W_o was not applied: the merged heads were returned as they are.

Must fail: prefill_decode, no_cache_output
"""
PATCH = [("        return y @ W_o ", "        return y ")]
