"""Helpers shared by the tests: the project root, a strict MkDocs build in a subprocess,
and small fixture sites that use the real hooks with their own figure scripts."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
HOOKS = ROOT / "hooks"


def mkdocs_build(config: Path, site_dir: Path, cache_dir: Path, *, timeout=600, env=None, **popen):
    """Run ``mkdocs build --strict`` for ``config`` into ``site_dir`` with its own cache.

    The render statistics go to ``<site_dir>.stats.json`` (see :func:`build_stats`). A fixture
    site renders a few small figures: one render worker (``MHA_WORKERS=1`` unless ``env`` says
    otherwise) spares the second worker's start (about a second and a half of CPU, on a machine
    whose two cores the other tests share).
    """
    env = dict(os.environ, MHA_CACHE_DIR=str(cache_dir), NO_MKDOCS_2_WARNING="1", MHA_WORKERS="1",
               MHA_BUILD_STATS=str(Path(str(site_dir) + ".stats.json")), **(env or {}))
    cmd = [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site_dir)]
    if popen:
        return subprocess.Popen(cmd, env=env, cwd=config.parent, **popen)
    return subprocess.run(cmd, env=env, cwd=config.parent, capture_output=True, text=True, timeout=timeout)


def load_file(path: Path, name: str):
    """The module in the file ``path`` (a hook or a tool, which are not packages), loaded afresh
    under ``name``: a test gets its own copy, with module-level state of its own."""
    import importlib.util

    if str(path.parent) not in sys.path:  # a hook imports its siblings (navigation, _serve, ...) by name
        sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build_stats(site_dir: Path) -> dict:
    """What the figure step of the build that wrote ``site_dir`` did (cached, rendered, ...)."""
    return json.loads(Path(str(site_dir) + ".stats.json").read_text())


def data_file(site: Path, name: str) -> bytes:
    """A data download of a built site as a reader has it once unpacked: ``figures/NAME``, or
    ``figures/NAME.gz`` for a large one, which the site serves compressed (never both)."""
    import gzip

    plain, packed = site / "figures" / name, site / "figures" / (name + ".gz")
    assert plain.is_file() != packed.is_file(), f"{name}: the site should serve exactly one of it and {name}.gz"
    return gzip.decompress(packed.read_bytes()) if packed.is_file() else plain.read_bytes()


def script_section(built_site: Path, name: str) -> tuple[str, str]:
    """(the HTML of ``name``'s section, the whole page) on its chapter's scripts page
    (``scripts/CHAPTER/``: a section per script, its heading's id the script's name)."""
    import re as re_lib

    import figures

    page = (built_site / "scripts" / (figures.scripts()[name].chapter or "all") / "index.html").read_text()
    m = re_lib.search(rf'<h2 id="{name}".*?(?=<h2 |</article>)', page, flags=re_lib.S)
    assert m, f"no section {name} on its chapter's scripts page"
    return m.group(0), page


def tree(site: Path) -> dict[str, bytes]:
    return {str(p.relative_to(site)): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


SMALL_FIGURE = '''\
"""A small line figure, for the machine's tests.

It draws n points of y = scale * x.
"""
from figures._kit import cli, style


def data(n: int = 3, scale: float = 1.0, label: str = "line") -> dict:
    return dict(x=list(range(n)), y=[scale * i for i in range(n)], label=label)


def draw(data, ax=None):
    fig, ax = style.new_figure(3, 2) if ax is None else (ax.figure, ax)
    ax.plot(data["x"], data["y"], label=data["label"])
    ax.set_title(data["label"])
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
'''

SMALL_TABLE = '''\
"""A small table, for the machine's tests."""
from figures._kit import cli
from figures._kit.export import markdown_table


def data(rows: int = 2) -> dict:
    return dict(rows=[dict(i=i, square=i * i) for i in range(rows)])


def table(data) -> str:
    return markdown_table(["i", "i²"], [[r["i"], r["square"]] for r in data["rows"]], "rr")


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
'''


def mini_project(base: Path, scripts: dict[str, str], pages: dict[str, str] | str) -> Path:
    """A MkDocs project in ``base/proj`` using the real figures hook and its own ``figures/``.

    ``pages`` maps page paths to Markdown (a string is the home page).
    """
    proj = base / "proj"
    (proj / "docs").mkdir(parents=True)
    (proj / "figures").mkdir()
    for name, source in scripts.items():
        (proj / "figures" / f"{name}.py").write_text(source)
    if isinstance(pages, str):
        pages = {"index.md": pages}
    for rel, text in pages.items():
        (proj / "docs" / rel).parent.mkdir(parents=True, exist_ok=True)
        (proj / "docs" / rel).write_text(text)
    (proj / "mkdocs.yml").write_text(textwrap.dedent(f"""\
        site_name: mini
        theme: {{name: mkdocs}}
        hooks: ["{HOOKS / 'site_figures.py'}"]
        markdown_extensions: [attr_list, md_in_html, tables]
        """))
    return proj


def nav_pages() -> list[tuple[str, str]]:
    """(source path, site URL) of every page in mkdocs.yml's nav, in reading order."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("", lambda loader, suffix, node: None)  # !ENV, !relative: not needed here
    nav = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=Loader)["nav"]
    out = []

    def add(path: str):
        stem = path.rsplit(".", 1)[0]
        index = stem == "index" or stem.endswith("/index")  # index.md -> "", api/index.md -> "api/"
        out.append((path, stem.removesuffix("index") if index else stem + "/"))

    def walk(items):
        for item in items:  # "Title: page.md", "Section: [...]", or a bare "page.md" (titled by its heading)
            for value in ([item] if isinstance(item, str) else item.values()):
                if isinstance(value, list):
                    walk(value)
                else:
                    add(value)
    walk(nav)
    return out


ARITHMATEX_OPEN = re.compile(r'<(span|div) class="arithmatex">')
TEX_ANNOTATION = re.compile(r'<annotation encoding="application/x-tex">(.*?)</annotation>', re.S)


#: A number's provenance span (hooks/provenance.py), around its text only.
VALUE_SPAN = re.compile(r'<span class="mha-value" data-source="[^"]*" data-prov="[^"]*">([^<]*)</span>')


def unwrap_values(html: str) -> str:
    """``html`` with each inserted number's ``mha-value`` span replaced by its text."""
    return VALUE_SPAN.sub(r"\1", html)


def page_text(site: Path, page: str, *, tex: bool = True) -> str:
    """A built page's text, as a test reads it: each formula as its TeX (``tex``; else KaTeX's
    text), each inserted number as its text, tags as spaces, scripts and styles left out."""
    html = (site / page / "index.html" if page else site / "index.html").read_text(encoding="utf-8")
    html = math_as_tex(html) if tex else unwrap_values(html)
    html = re.sub(r"<script.*?</script>|<style.*?</style>", " ", html, flags=re.S)
    from html import unescape

    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))


def math_as_tex(html: str) -> str:
    """Built HTML with each formula (KaTeX HTML, rendered by hooks/site_math.py) back to its TeX
    source between ``\\( \\)`` or ``\\[ \\]``, as the page's Markdown wrote it: tests that read
    a page's text read formulas as written, not KaTeX's glyphs twice over. A number inserted by
    ``{{ value }}`` is its text, without the span that says where it comes from (provenance)."""
    html = unwrap_values(html)
    out, pos = [], 0
    for m in ARITHMATEX_OPEN.finditer(html):
        if m.start() < pos:
            continue
        tag = m.group(1)
        depth, end = 0, None
        for t in re.finditer(rf"<{tag}\b|</{tag}>", html[m.start():]):
            depth += -1 if t.group(0).startswith("</") else 1
            if depth == 0:
                end = m.start() + t.end()
                break
        if end is None:
            raise ValueError(f"unclosed arithmatex <{tag}> at offset {m.start()}")
        element = html[m.start():end]
        tex = TEX_ANNOTATION.search(element)
        if tex is None:  # not rendered (a hook test's raw markup): as it is
            out.append(html[pos:end])
        else:
            left, right = ("\\[", "\\]") if 'class="katex-display"' in element else ("\\(", "\\)")
            out.append(f"{html[pos:m.start()]}<{tag} class=\"arithmatex\">{left}{tex.group(1)}{right}</{tag}>")
        pos = end
    out.append(html[pos:])
    return "".join(out)


def reuse_rows(built_site: Path):
    """(page, install lines, command, file stem) of every reuse row of a built site (print/
    repeats the pages' rows): what a reader copies from under each figure and table."""
    import html as html_lib
    import re as re_lib

    for page in sorted(built_site.rglob("index.html")):
        if page.parent.name == "print":
            continue
        for row in re_lib.findall(r'<p class="mha-reuse"[^>]*>(.*?)</p>', page.read_text(), flags=re_lib.S):
            codes = [html_lib.unescape(c) for c in re_lib.findall(r"<code>(.*?)</code>", row, flags=re_lib.S)]
            stem = re_lib.search(r'href="[./]*figures/([^"/]+)\.json(?:\.gz)?"', row).group(1)  # (.gz: a large one)
            yield page.relative_to(built_site), codes[:-1], codes[-1], stem


def article(html: str):
    """The page's ``<article>`` element, parsed alone (BeautifulSoup's html.parser): the rest of a
    page, its navigation mostly, is three quarters of its bytes and most of the parsing time."""
    from bs4 import BeautifulSoup

    start, end = html.find("<article"), html.rfind("</article>")
    if start < 0 or end < start:
        raise ValueError(f"html has no <article>...</article> (got {len(html)} characters)")
    return BeautifulSoup(html[start:end + len("</article>")], "html.parser").find("article")



# ---- the attention viewers' stored weights and scores, by hand ----------------------------------

def viewer_code(w: float) -> int:
    """A weight as the viewers store it: the nearest per mille (Python's three-decimal text), but
    1001 for a weight above 0 that rounds to 0 and 1002 for one below 1 that rounds to 1000."""
    q = int(f"{float(w):.3f}".replace(".", ""))
    return 1001 if w > 0 and q == 0 else 1002 if w < 1 and q == 1000 else q


def viewer_amount(q):
    """A stored code as the per-mille weight the viewer draws: 1001 as 0, 1002 as 1000."""
    q = np.asarray(q)
    return np.where(q == 1001, 0, np.where(q == 1002, 1000, q))


def viewer_text(w: float) -> str:
    """A weight as the viewer writes it: three decimals, "<0.0005" or ">0.9995"."""
    q = viewer_code(w)
    return "<0.0005" if q == 1001 else ">0.9995" if q == 1002 else f"{float(w):.3f}"


def viewer_score(v: float) -> float:
    """A score as the viewers store it: Python's two decimals; where they read a score that is
    not 0 as 0, two significant digits; where they read one strictly between -1 and 1 as 1 or -1,
    the fewest significant digits that do not."""
    text = f"{v:.2f}"
    if v != 0 and float(text) == 0:
        return float(f"{v:.2g}")
    if -1 < v < 1 and abs(float(text)) == 1:
        digits = 3
        while abs(float(f"{v:.{digits}g}")) == 1:
            digits += 1
        return float(f"{v:.{digits}g}")
    return float(text)
