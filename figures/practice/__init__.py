"""Figures and tables of the practice chapter."""
