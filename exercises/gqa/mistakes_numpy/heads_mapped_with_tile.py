"""query head h used KV head h % num_kv_heads (the mapping np.tile gives) instead of h // group (np.repeat along the head axis).

Must fail: head_mapping

Source: https://github.com/ekzhang/jax-js/pull/180
The pull request says jax-js's GQA had a bug in which the KV heads were tiled across the query heads where they should have been repeated (each KV head serving consecutive query heads), and fixes it; it is merged.
"""
PATCH = [("k = np.repeat(k, group, axis=1)", "k = np.tile(k, (1, group, 1, 1))"), ("v = np.repeat(v, group, axis=1)", "v = np.tile(v, (1, group, 1, 1))")]
