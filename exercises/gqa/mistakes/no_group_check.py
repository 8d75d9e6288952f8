"""num_query_heads % num_kv_heads != 0 was not rejected with a ValueError (the query heads cannot be split into equal groups).

Must fail: bad_group
"""
PATCH = [("if num_kv_heads <= 0 or num_query_heads % num_kv_heads != 0:", "if num_kv_heads <= 0:")]
