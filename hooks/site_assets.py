"""MkDocs hook: serve KaTeX's stylesheet and fonts from the project's own npm install.

``make`` runs ``npm ci``, which puts the pinned ``katex`` package in ``node_modules/``;
``hooks/site_math.py`` renders every formula with it when the site is built, so the pages
need no KaTeX script, only its stylesheet and WOFF2 fonts, added here under
``assets/katex/``. The stylesheet is KaTeX's default one (``font-display: block``): a formula
appears once its font is there (the two fonts nearly every formula uses are preloaded, see
``hooks/site_math.py``) instead of being drawn in a fallback font first and laid out a
second time when the font arrives, which on a formula-dense page made a phone restyle
thousands of elements again. Prose is in the system font and never waits. No page loads
anything from another host.
"""
from __future__ import annotations

import logging
import re
import sys
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _paths import project_dir  # noqa: E402

# (served name, file in node_modules/katex/dist/)
KATEX_FILES = (("katex.min.css", "katex.min.css"),)


def on_files(files, *, config):
    dist = project_dir(config) / "node_modules" / "katex" / "dist"
    if not (dist / "katex.js").is_file():
        raise PluginError(f"KaTeX is missing from {dist}: run `make deps` (it runs `npm ci`) first")
    for name, rel in KATEX_FILES:
        css, n = woff2_only((dist / rel).read_text(encoding="utf-8"))
        if not n or re.search(r"\.(woff|ttf)\)", css):  # KaTeX's stylesheet changed form: look again
            raise PluginError(f"{dist / rel} names its fonts in a form hooks/site_assets.py's OLD_FONT_FORMATS "
                              "does not read: the site ships WOFF2 only, so the stylesheet must name WOFF2 only")
        files.append(File.generated(config, f"assets/katex/{name}", content=css))
    for font in sorted((dist / "fonts").glob("*.woff2")):
        files.append(File.generated(config, f"assets/katex/fonts/{font.name}", abs_src_path=str(font)))
    return files


# ---- Trim what the theme ships but this site never loads ----------------------------------------
# Source maps are for debugging the theme, and search needs only the languages in the search
# plugin's `lang` (English here, which needs none of lunr's language packs or word splitters).
# Together they are about 2.5 MB of the site. The bundles' sourceMappingURL comments go too,
# so no request points at a file that is not there.
MAP_COMMENT = b"\n//# sourceMappingURL="

# The theme's palette stylesheet turns transitions off under `body[data-md-color-switching]`,
# for the moment a reader switches light/dark. The bundle sets and removes that attribute on
# every page load too, and a rule on `[attr] *` makes the browser restyle the whole page each
# time: twice per load, about 0.3 s of a throttled phone's main thread on a formula-dense page.
# Without the rule, switching the palette lets a few colours fade for 0.1 s instead. Only a
# whole rule every selector of which starts with the attribute goes (never part of a list).
SWITCHING_RULE = re.compile(r"(?:(?<=\})|^)\[data-md-color-switching\][^{},]*"
                            r"(?:,\[data-md-color-switching\][^{},]*)*\{[^{}]*\}")
log = logging.getLogger("mkdocs.hooks.assets")


def drop_switching_rule(css: str) -> tuple[str, int]:
    """The palette stylesheet without its ``[data-md-color-switching] ...`` rules, and how many."""
    return SWITCHING_RULE.subn("", css)


# KaTeX's stylesheet names three files per font: WOFF2, then WOFF and TrueType for browsers
# without WOFF2 (none that this site supports: every browser since 2016 reads WOFF2). Only the
# WOFF2 files are shipped, so the site's copy of the stylesheet names only those (on_files
# serves it from memory): a link checker found 40 links to files the site did not have.
OLD_FONT_FORMATS = re.compile(r',url\((fonts/[^)]+)\.(?:woff|ttf)\) format\("(?:woff|truetype)"\)')


def woff2_only(css: str) -> tuple[str, int]:
    """KaTeX's stylesheet naming only its WOFF2 fonts, and how many older-format sources went."""
    return OLD_FONT_FORMATS.subn("", css)


def _search_langs(config) -> set[str]:
    for name, plugin in config.plugins.items():
        if name.endswith("search"):
            return set(plugin.config.get("lang") or ["en"])
    return {"en"}


def on_post_build(*, config):
    site = Path(config.site_dir)
    for path in sorted((site / "assets" / "stylesheets").glob("palette.*.min.css")):
        css, n = drop_switching_rule(path.read_text(encoding="utf-8"))
        if n:
            path.write_text(css, encoding="utf-8")
        else:  # a warning fails `mkdocs build --strict`: the theme changed, look again
            log.warning("%s holds no [data-md-color-switching] rule: the theme changed; "
                        "check hooks/site_assets.py's SWITCHING_RULE", path.relative_to(site))
    js = site / "assets" / "javascripts"
    if not js.is_dir():
        return
    for path in sorted(js.rglob("*.js.map")):
        path.unlink()
    for path in sorted(js.rglob("*.js")):
        data = path.read_bytes()
        cut = data.rfind(MAP_COMMENT)
        if cut != -1 and b"\n" not in data[cut + 1:].rstrip(b"\n"):
            path.write_bytes(data[:cut] + b"\n")
    langs = _search_langs(config)
    lunr = js / "lunr"
    if langs <= {"en"} and lunr.is_dir():
        for path in sorted(lunr.rglob("*.js")):
            path.unlink()
    elif lunr.is_dir():
        keep = {f"lunr.{lang}.min.js" for lang in langs} | {"lunr.stemmer.support.min.js", "lunr.multi.min.js"}
        for path in sorted((lunr / "min").glob("lunr.*.min.js")):
            if path.name not in keep:
                path.unlink()
