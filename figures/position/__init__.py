"""Figures and tables of the position chapter."""
