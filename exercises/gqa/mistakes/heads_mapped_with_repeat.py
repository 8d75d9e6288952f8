"""query head h used KV head h % num_kv_heads (the mapping repeat gives) instead of h // group (repeat_interleave).

Must fail: head_mapping

Source: https://github.com/ekzhang/jax-js/pull/180
The pull request says jax-js's GQA had a bug in which the KV heads were tiled across the query heads where they should have been repeated (each KV head serving consecutive query heads), and fixes it; it is merged.
"""
PATCH = [("k = k.repeat_interleave(group, dim=1) ", "k = k.repeat(1, group, 1, 1) "),
         ("v = v.repeat_interleave(group, dim=1) ", "v = v.repeat(1, group, 1, 1) ")]
