"""Figures and tables of the generation chapter: the KV cache and FlashAttention."""
