"""the causal mask filled the hidden scores with a finite number (e.g. -1e4, -1e9 or the dtype's minimum) instead of -inf: a query row whose keys are all hidden (L_q > L_k, the first rows) becomes a uniform average of the values instead of 0 (and with a small fill such as -1e4, a visible score below it would lose to the masked ones).

Must fail: causal_bottom_right

Source: https://github.com/ohdearquant/lattice/pull/373
The pull request replaces the tiled online-softmax kernel's finite MASK_VALUE = -10_000.0 with -inf, showing a case where the masked key's value wins, and guards the all-masked row explicitly so it gives zeros.
"""
PATCH = [("s = np.where(cols > rows + offset, -np.inf, s)", "s = np.where(cols > rows + offset, -1e4, s)")]
