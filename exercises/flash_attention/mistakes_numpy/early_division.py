"""the output was divided by the running sum before all key blocks were seen (acc / l inside the loop); divide once, after the last block (or rescale the already-divided output by l_old / l_new).

Must fail: values
"""
PATCH = [("        m = m_new\n", "        acc = acc / np.where(l > 0, l, 1)\n        m = m_new\n"),
         ("    np.divide(acc, l, out=out, where=l > 0)\n", "    out = np.where(l > 0, acc, 0)\n")]
