"""the softmax was computed in NumPy (`.detach().numpy()`, then `torch.from_numpy`): the output is right, but the round trip cuts the autograd graph, so no gradient reaches query and key through the scores, nor W_q and W_k (and bfloat16 has no NumPy dtype at all). Keep the softmax in torch operations on the given tensors.

Must fail: grad_inputs, grad_weights
"""
PATCH = [("def multi_head_attention(",
          "def _numpy_softmax(att):\n"
          "    import numpy as np\n"
          "    s = att.detach().numpy()\n"
          "    e = np.exp(s - s.max(axis=-1, keepdims=True))\n"
          "    return torch.from_numpy(e / e.sum(axis=-1, keepdims=True))\n\n\n"
          "def multi_head_attention("),
         ("att = torch.where(keep, F.softmax(att, dim=-1), 0.0)", "att = torch.where(keep, _numpy_softmax(att), 0.0)"),
         ("att = F.softmax(att, dim=-1) ", "att = _numpy_softmax(att) ")]
