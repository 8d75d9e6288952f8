"""GELU was computed with the GPT-2 tanh approximation; this exercise asks for exact erf GELU, 0.5 x (1 + erf(x / sqrt(2))) (the tanh form, a published convention, differs by up to ~5e-4).

Must fail: values
"""
PATCH = [("    erf = _ERF(x.astype(np.float64) / math.sqrt(2.0)).astype(np.float64)\n",
          "    x64 = x.astype(np.float64)\n    erf = np.tanh(math.sqrt(2.0 / math.pi) * (x64 + 0.044715 * x64 ** 3))\n")]
