"""Parameter names between Hugging Face and Megatron-core checkpoints."""

_HF_TO_MCORE = {
    "model.embed_tokens.weight": "embedding.word_embeddings.weight",
    "model.norm.weight": "decoder.final_layernorm.weight",
    "lm_head.weight": "output_layer.weight",
}


def hf_to_mcore_name(name):
    """The Megatron-core name of a Hugging Face parameter name."""
    if name in _HF_TO_MCORE:
        return _HF_TO_MCORE[name]
    return name.replace("model.layers.", "decoder.layers.", 1)
