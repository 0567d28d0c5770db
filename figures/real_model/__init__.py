"""Figures and tables of the real model chapter."""
