"""Figures and tables of the experiments chapter: tiny decoders trained on this machine's CPU
(tools/train_tiny.py; stored in figures/data/tiny_decoders.json and its weights)."""
