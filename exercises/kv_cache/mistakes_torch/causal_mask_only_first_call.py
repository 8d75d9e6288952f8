"""the causal mask was applied only on the first call (an empty cache); later chunks of several tokens attend to future tokens of their own chunk.

Must fail: chunked_prefill
"""
PATCH = [("att = att.masked_fill(~allowed, float(\"-inf\"))", "att = att.masked_fill(~allowed, float(\"-inf\")) if T == 0 else att")]
