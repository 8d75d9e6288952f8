"""the LayerNorm divisor was (var + eps) ** 2 instead of (var + eps) ** 0.5 (a square where the square root belongs): the normalised features are scaled by 1/var^2 instead of 1/sqrt(var).

Must fail: values, layer_norm_scale

Source: https://github.com/131250208/TPlinker-joint-extraction/issues/37
The issue quotes components.py computing std = (variance + self.epsilon) **2 and asks whether it should be ** 0.5; the author confirmed.
"""
PATCH = [("return (x - mean) / np.sqrt(var + eps) * weight + bias     # (..., D)",
          "return (x - mean) / (var + eps) ** 2 * weight + bias       # (..., D)")]
