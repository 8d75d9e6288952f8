"""the LayerNorm scale and shift (ln1/ln2 weight and bias) were cut from the autograd graph, so they get no gradient: the values are right, but the block never learns its normalisation parameters.

Must fail: grad_params

Source: https://github.com/harvard-edge/cs249r_book/pull/1504
The pull request fixes TinyTorch's LayerNorm, whose gamma and beta were created without requires_grad, so their gradients were always None and "LayerNorm silently never learns its scale and shift parameters".
"""
PATCH = [("return (x - mean) / torch.sqrt(var + eps) * weight + bias  # (..., D)",
          "return (x - mean) / torch.sqrt(var + eps) * weight.detach() + bias.detach()  # (..., D)")]
