"""float64 inputs came out right only to float32 precision, as when they are computed in float32 internally (cast down, then the result cast back to float64) or a constant in the computation (the scale, say) is a float32 number: compute float64 input in float64 throughout.

Must fail: float64
"""
PATCH = [('    work = np.float64 if x.dtype == np.float64 else np.float32',
          '    work = np.float32')]

# no REPLAY_ERROR_RATIO: float32_table_for_float64 has one, and a float32 table is the larger part of this
# mistake's error, so with a ratio each would explain the other's candidates (neither named)
