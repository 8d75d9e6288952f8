"""the keys and values were padded with zeros to a whole number of blocks and the padded keys were not masked (no bounds check in the last block): each padded key scores 0 and takes a share of the softmax, diluting every row's weights whenever L_k is not a multiple of block_size.

Must fail: ragged_blocks

Source: https://github.com/FluxML/NNkernels.jl/pull/16
The pull request adds the missing bounds check `(in_seq_bounds || k_offset + i <= size(k, 2)) || break` to the online softmax of NNkernels' flash attention, which gave NaNs and wrong results without it.
"""
PATCH = [("    rows = np.arange(L_q)[:, None]\n",
          "    rows = np.arange(L_q)[:, None]\n"
          "    pad = (-L_k) % block_size                                   # pad to whole blocks, unmasked\n"
          "    k = np.concatenate([k, np.zeros(k.shape[:2] + (pad, k.shape[3]), dtype=k.dtype)], axis=2)\n"
          "    v = np.concatenate([v, np.zeros(v.shape[:2] + (pad, v.shape[3]), dtype=v.dtype)], axis=2)\n")]
