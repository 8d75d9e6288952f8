"""the positions were restarted at 0: row r was rotated as position r, not positions[r] (after T cached tokens the new rows are positions T .. T+L-1).

Must fail: cache_offset
"""
PATCH = [('pos = np.asarray(positions)', 'pos = np.arange(x.shape[-2])')]
