"""MkDocs hook: interactive explorers, ``{{ explorer NAME }}`` on a line of its own.

Each explorer is a static figure (what readers without JavaScript see) followed by a
hidden form that ``docs/javascripts/explorers.js`` turns on. The inputs the script needs
and cannot recompute itself (the example's embeddings, the presets' matrices, the seeded
Random preset) come from ``mhalib`` at build time, inlined as JSON in the page: no extra
request, works offline. The browser tests check the script's numbers against ``mhalib``.

Names: ``heads`` (heads in action), ``rope`` (RoPE rotation), ``pe`` (sinusoidal PE).
"""
from __future__ import annotations

import json
import math
import re

from mkdocs.exceptions import PluginError

EXPLORER_RE = re.compile(r"^\{\{\s*explorer\s+(?P<name>[a-z]+)\s*\}\}[ \t]*$", re.M)


def _heads_data() -> dict:
    from mhalib import examples

    ex = examples.the_cat_sat_down()
    presets = {name: {k: v.tolist() for k, v in examples.heads_preset(name, seed=0).items()}
               for name in examples.HEADS_PRESETS}
    return dict(tokens=ex["tokens"], X=ex["X"].tolist(), presets=presets, tau=math.sqrt(2.0))


def _rope_data() -> dict:
    from mhalib import examples

    demo = examples.rope_demo()
    return dict(q=demo["q"].tolist(), k=[0.8, -0.5], theta=demo["theta"])


def _pe_data() -> dict:
    return dict(base=10000.0, d_model=16, n_positions=32)


EXPLORERS = {
    "heads": dict(data=_heads_data, figure="heads_in_action.svg?presets=Identity",
                  alt="Single-head, head 1 and head 2 attention maps of The cat sat down",
                  caption="Static version: the Identity preset at τ = √2."),
    "rope": dict(data=_rope_data, figure="rope_rotation_2d.svg",
                 alt="The query q rotated to positions 0 to 3, and the score against the offset",
                 caption="Static version: q rotated to positions 0–3 and the score against the offset."),
    "pe": dict(data=_pe_data, figure="pe_heatmap.svg?d_model=16&n_positions=32",
               alt="Heatmap of the sinusoidal encoding for 32 positions and 16 dimensions",
               caption="Static version: 32 positions, d_model = 16."),
}


def figure_references(text: str) -> list[str]:
    """The figure references (``NAME.svg?params``) that the explorers in ``text`` will emit."""
    return [EXPLORERS[m["name"]]["figure"] for m in EXPLORER_RE.finditer(text) if m["name"] in EXPLORERS]


def on_page_markdown(markdown, page, config, files):
    def explorer(match):
        name = match["name"]
        if name not in EXPLORERS:
            raise PluginError(f"{page.file.src_uri}: unknown explorer {name!r}; known: {', '.join(EXPLORERS)}")
        spec = EXPLORERS[name]
        pre = "../" * page.file.src_uri.count("/")
        payload = json.dumps(spec["data"](), separators=(",", ":"))
        return (
            f'<div class="mha-explorer-static" data-static-for="{name}" markdown="1">\n\n'
            f'![{spec["alt"]}]({pre}figures/{spec["figure"]} "{spec["caption"]}")\n\n</div>\n\n'
            f'<div class="mha-explorer" data-explorer="{name}"><script type="application/json" '
            f'class="mha-explorer-data">{payload}</script><div class="mha-explorer-ui" hidden></div></div>\n'
        )

    return EXPLORER_RE.sub(explorer, markdown)
