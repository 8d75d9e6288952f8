"""the base argument was ignored (10000 used whatever base was passed, as when rope_theta is not read from the config): inv_freq is base^(-2i/d) for the base given.

Must fail: base
"""
PATCH = [('inv_freq = (1.0 / (work(base) ** (np.arange(0, d, 2, dtype=work) / work(d)))).astype(work)',
          'inv_freq = (1.0 / (work(10000.0) ** (np.arange(0, d, 2, dtype=work) / work(d)))).astype(work)')]
