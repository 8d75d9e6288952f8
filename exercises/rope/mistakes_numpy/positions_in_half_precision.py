"""the positions were cast to x's dtype before the angles were formed: float16 holds integers exactly only up to 2048, so later positions (after a long cache) are rounded and their rows rotated by the wrong angles. Form the angles at float32 for float16 input (positions and frequencies), and cast only the result back.

Must fail: half_precision
"""
PATCH = [("theta = pos.astype(work)[:, None] * inv_freq[None, :]", "theta = pos.astype(x.dtype).astype(work)[:, None] * inv_freq[None, :]")]
