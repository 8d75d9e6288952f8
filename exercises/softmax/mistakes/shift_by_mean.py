"""the logits were shifted by their mean along the axis instead of their maximum: exp still overflows when one logit sits far above the others (shift by the max, so every exponent is <= 0).

Must fail: large_logits, hidden_values
"""
PATCH = [("m = np.max(x, axis=axis, keepdims=True)", "m = np.mean(x, axis=axis, keepdims=True)")]
