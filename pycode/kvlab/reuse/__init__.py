"""Reusing and forgetting cached keys and values.

prefix_cache  reuse across requests: block-hash (vLLM) and radix-tree (SGLang) prefix caches
eviction      keeping the cache within a budget: sliding window, attention sinks, heavy hitters
context       running out of context: llama.cpp's context shift
"""
