"""the output was divided by the running sum before all key blocks were seen (acc / l inside the loop); divide once, after the last block (or rescale the already-divided output by l_old / l_new).

Must fail: values
"""
PATCH = [("        m = m_new\n", "        acc = acc / torch.where(l > 0, l, torch.ones_like(l))\n        m = m_new\n"), ("return torch.where(seen, acc / torch.where(seen, l, torch.ones_like(l)), torch.zeros_like(acc))", "return acc")]
