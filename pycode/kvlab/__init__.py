"""kvlab: the numbers behind the KV cache explainer.

Pure numpy; runs unchanged in CPython and in Pyodide. Every function a widget
uses returns plain, JSON-able data.
"""
from kvlab.attention import causal_mask, multi_head_attention, scaled_dot_product_attention, softmax
from kvlab.widgets import attention_demo

__version__ = "0.1.0"

__all__ = [
    "attention_demo",
    "causal_mask",
    "multi_head_attention",
    "scaled_dot_product_attention",
    "softmax",
]
