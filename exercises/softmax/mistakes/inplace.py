"""the input array is modified in place (e.g. `x -= x.max(...)`); work on a copy.

Must fail: input_unchanged
"""
PATCH = [("e = np.exp(x - m)", "x -= m\n        e = np.exp(x)")]
