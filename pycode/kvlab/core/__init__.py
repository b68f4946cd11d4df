"""Core maths of a decoder-only transformer and its KV cache.

attention   softmax (the one softmax in kvlab), causal mask, scaled dot-product and multi-head attention
cache       KVCache: what is stored per layer, and cache lengths through prefill and decode
decoding    ToyDecoder (a small random-weight decoder built on `attention`, with or without a
            cache, for the cache figures) and the cost accounting (multiply-adds per step)
gpt         GPT: the numpy reference of the *trained* tiny model (its exact architecture:
            RoPE, smeared keys, GELU), checked against the exported ONNX graph
sampling    a step's logits → top-k probabilities and a token's NLL (model.js ports both)
tokenizer   the byte-level BPE tokenizer (pure Python)
tiny        the tiny model's files (models/tiny/) and how the numpy reference runs it

Why two transformers: ToyDecoder is the textbook decoder the cache pages reason about
(any size, random weights, MHA/GQA, cost counted per step); GPT reproduces one trained
model bit for bit so the site can compare numpy with onnxruntime-web. Both use
`attention.softmax`.
"""
