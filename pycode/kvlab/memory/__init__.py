"""How much memory the KV cache takes, whether a model fits, and what serving costs.

architecture  a model's layers as the cache sees them (full, sliding-window, linear attention)
hf_config     Hugging Face config.json -> Architecture
catalogue     the models and GPUs in kvlab/data/*.json
weights       bytes of the weights per format (BF16, FP8, GGUF quantisations ...)
kv_bytes      exact KV cache bytes per token and in total, as llama.cpp and vLLM allocate them
verdict       one answer to "does it fit", what binds and by how much
serving       time per token (roofline), users per GPU, dollars per million tokens
"""
