"""the positions were cast to x's dtype before the angles were formed: bfloat16 holds integers exactly only up to 256 and float16 up to 2048, so later positions (after a long cache) are rounded and their rows rotated by the wrong angles. Form the angles at float32 for half inputs (positions and frequencies), and cast only the result back.

Must fail: half_precision
"""
PATCH = [("theta = pos.to(work)[:, None] * inv_freq[None, :]", "theta = pos.to(x.dtype).to(work)[:, None] * inv_freq[None, :]")]
