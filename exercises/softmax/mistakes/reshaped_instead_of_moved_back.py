"""the softmax axis was moved last with np.moveaxis, but the result was reshaped back to the input's shape instead of moved back: for any axis but the last, values land in the wrong positions (np.reshape reinterprets the memory order; np.moveaxis(out, -1, axis) restores it).

Must fail: axes, non_contiguous
"""
PATCH = [("x = np.asarray(x)\n", "shape = np.shape(x)\n    x = np.moveaxis(np.asarray(x), axis, -1)\n    axis = -1\n"),
         ("return out.astype(x.dtype, copy=False)", "return out.astype(x.dtype, copy=False).reshape(shape)")]
