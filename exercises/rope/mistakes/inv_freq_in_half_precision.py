"""the inverse frequencies were rounded to x's half-precision dtype before the phase positions * inv_freq was formed (the rest at float32): a 2^-8 relative error on a frequency becomes radians of error once positions reach the thousands. Keep inv_freq at float32 for half inputs and cast only the result back.

Must fail: half_precision

Source: https://github.com/sgl-project/sglang-jax/issues/1472
The issue shows RotaryEmbedding converting its float32 inverse frequencies to the model dtype (bfloat16) before the einsum with float32 positions, with a phase error growing with position.
"""
PATCH = [('theta = pos.to(work)[:, None] * inv_freq[None, :]', 'theta = pos.to(work)[:, None] * inv_freq.to(x.dtype).to(work)[None, :]')]
