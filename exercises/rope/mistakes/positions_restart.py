"""the positions were restarted at 0: row r was rotated as position r, not positions[r] (after T cached tokens the new rows are positions T .. T+L-1).

Must fail: cache_offset
"""
PATCH = [('pos = torch.as_tensor(positions, device=x.device)', 'pos = torch.arange(x.shape[-2], device=x.device)')]
