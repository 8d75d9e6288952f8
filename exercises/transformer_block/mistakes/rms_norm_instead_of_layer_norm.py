"""the normalisation divided by the root mean square of x without subtracting its mean (RMSNorm, as in T5 and LLaMA) instead of LayerNorm's (x - mean) / sqrt(var + eps): the mean is kept and the scale is off whenever the features do not average to zero.

Must fail: values, layer_norm_scale

Source: https://github.com/huggingface/transformers/issues/14772
The issue shows T5LayerNorm computing variance = hidden_states.pow(2).mean(-1) with no mean subtracted; the maintainer explains this is the RMS norm T5 uses, which is not the LayerNorm of this block.
"""
PATCH = [("var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)        # (..., 1) population variance",
          "var = (x ** 2).mean(dim=-1, keepdim=True)                 # (..., 1) mean square"),
         ("return (x - mean) / torch.sqrt(var + eps) * weight + bias  # (..., D)",
          "return x / torch.sqrt(var + eps) * weight + bias          # (..., D) RMSNorm")]
