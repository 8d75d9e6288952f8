"""GELU was computed with the GPT-2 tanh approximation; this exercise asks for exact erf GELU, 0.5 x (1 + erf(x / sqrt(2))) (the tanh form, a published convention, differs by up to ~5e-4).

Must fail: values
"""
PATCH = [("F.gelu(x, approximate=\"none\")", "F.gelu(x, approximate=\"tanh\")")]
