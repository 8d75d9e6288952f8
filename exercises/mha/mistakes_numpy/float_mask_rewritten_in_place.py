"""the caller's float mask was changed in place (e.g. rewritten into an additive bias: mask[...] = where(mask != 0, 0, -inf)); the output is right, but the caller's mask is destroyed.

Must fail: inputs_unchanged
"""
PATCH = [("        att = np.where(np.asarray(mask) != 0, att, -np.inf) ",
          "        if np.asarray(mask).dtype.kind == 'f':\n"
          "            mask[...] = np.where(np.asarray(mask) != 0, 0.0, -np.inf)\n"
          "            att = att + mask\n"
          "        else:\n"
          "            att = np.where(np.asarray(mask) != 0, att, -np.inf)")]
