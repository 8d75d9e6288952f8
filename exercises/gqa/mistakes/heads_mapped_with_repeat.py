"""KV heads were mapped to query heads with repeat (head h -> KV head h % num_kv_heads) instead of repeat_interleave (head h -> KV head h // group).

Must fail: head_mapping
"""
PATCH = [("k = k.repeat_interleave(group, dim=1) ", "k = k.repeat(1, group, 1, 1) "),
         ("v = v.repeat_interleave(group, dim=1) ", "v = v.repeat(1, group, 1, 1) ")]
