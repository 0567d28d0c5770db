"""The figures' colours, with nothing to import: the site's build reads a theme's background
without loading matplotlib (:mod:`style` draws with them)."""

#: Okabe & Ito's colour-blind-safe palette (black replaced by the theme's foreground).
OKABE_ITO = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442"]
SEQUENTIAL = "viridis"
DIVERGING = "PuOr_r"
THEMES = {
    "light": dict(fg="#1f2328", muted="#57606a", grid="#d0d7de", accent="#966D09", bg="#ffffff"),
    "dark": dict(fg="#e6edf3", muted="#9da7b3", grid="#3d444d", accent="#F0C05A", bg="#1e2129"),
}
