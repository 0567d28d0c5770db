"""Figures and tables of the attention chapter."""
