"""the max and the sum were reduced without keepdims, so the reduced (N,)-shaped arrays broadcast against the last axis instead of the softmax axis: an (N, N) input is normalised along the wrong axis and other shapes raise. Keep the reduced axis (keepdims=True) so it broadcasts back where it came from.

Must fail: values_nd, hidden_values

Source: https://github.com/triton-lang/triton/issues/11406
The issue shows tl.softmax(x, dim=1, keep_dims=False) reducing max and sum without keeping the axis, returning rows that sum to [0.398, 5.449] on a 2x2 tile and a shape error on non-square tiles (fixed in triton-lang/triton#11409).
"""
PATCH = [("m = np.max(x, axis=axis, keepdims=True)", "m = np.max(x, axis=axis)"),
         ("s = np.sum(e, axis=axis, keepdims=True)", "s = np.sum(e, axis=axis)")]
