"""the function returned (weights, output) instead of (output, weights).

Must fail: output_basic
"""
PATCH = [("return output, weights", "return weights, output")]
