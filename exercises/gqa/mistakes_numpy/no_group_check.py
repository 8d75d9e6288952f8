"""num_query_heads % num_kv_heads != 0 was not rejected with a ValueError (the query heads cannot be split into equal groups).

Must fail: bad_group
"""
# The check alone removed, np.repeat would still raise ValueError by accident (a head-count mismatch in
# the matmul's broadcast) and pass bad_group; a solution that gathers KV heads by index (h // group)
# raises no ValueError, which is the mistake the check exists for.
PATCH = [("if num_kv_heads <= 0 or num_query_heads % num_kv_heads != 0:", "if num_kv_heads <= 0:"),
         ("k = np.repeat(k, group, axis=1)", "k = k[:, np.arange(H_q) // max(group, 1)]"),
         ("v = np.repeat(v, group, axis=1)", "v = v[:, np.arange(H_q) // max(group, 1)]")]
