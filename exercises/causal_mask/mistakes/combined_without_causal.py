"""the combined mask lost its causal part: it is the padding mask broadcast to (B, 1, L, L), so every query sees the later tokens of its sequence; combine causal AND padding.

Must fail: combined_mask

Source: https://github.com/huggingface/transformers/issues/48745
The issue shows RoFormerForCausalLM, BigBirdForCausalLM, RemBertForCausalLM and MegatronBertForCausalLM building a decoder mask without its causal part since v5.9.0, so each position sees the tokens after it and the language-model loss collapses.
"""
PATCH = [("return causal & padding                                  # (B, 1, L, L)",
          "return np.broadcast_to(padding, (B, 1, L, L)).copy()    # padding only")]
