"""use_cache=False was ignored: the call still attended over the cached tokens and appended its own keys and values to the cache, instead of attending causally over x alone and leaving the cache as it was.

Must fail: no_cache_output, no_cache_state
"""
PATCH = [("        if use_cache:\n", "        if True:\n")]
