"""LayerNorm's variance was computed in one pass as mean(x^2) - mean^2: mathematically the same, but in float32 the two terms cancel when a row's mean is large next to its spread (activations with a common offset), and most of the variance's digits are lost. Subtract the mean first and average (x - mean)^2 (two passes), as LayerNorm implementations do.

Must fail: layer_norm_scale

Source: https://github.com/pytorch/pytorch/issues/40302
The issue reports that PyTorch's LayerNorm computed the variance with a naive one-pass algorithm, which gives a variance of all zeros in float32 for rows of mean 100 and standard deviation 0.01; it was fixed with a stable (Welford) algorithm.
"""
PATCH = [("var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)       # (..., 1)",
          "var = (x * x).mean(axis=-1, keepdims=True) - mean * mean")]
