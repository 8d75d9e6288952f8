"""the shift was max(0, max along the axis) instead of the max itself: a slice whose logits are all far below 0 (below about -104 in float32, -745 in float64) is not shifted up, every exp underflows to 0 and the slice becomes 0/0. Subtract the slice's own maximum, whatever its sign.

Must fail: large_logits

Source: https://github.com/FluxML/NNlib.jl/pull/43
The pull request shows NNlib's softmax subtracting max(0, maximum) instead of the maximum, so softmax([-10000, -10000]) failed; it was fixed to subtract the maximum.
"""
PATCH = [("m = np.max(x, axis=axis, keepdims=True)", "m = np.maximum(np.max(x, axis=axis, keepdims=True), 0)")]
