"""MkDocs hook: the figures, tables, numbers, explorers and galleries the pages reference.

Thin glue. The page grammar is :mod:`directives`; what a figure is (its parameters, files,
command line) is :mod:`figures._kit.contract`; rendering and the cache are
:mod:`figures._kit.build`. Here directives become requests (``on_files``), results become
site files, and directives become Markdown (``on_page_markdown``). Every error names the
page, the line and the directive, and stops the build.

``MHA_SKIP_FIGURES=1`` turns the hook off (the benchmark's "plain build" baseline);
``MHA_BUILD_STATS=FILE`` writes the render statistics there as JSON.

Under ``mkdocs serve`` the pages' directives and the script pages' highlighted sources are kept
from one rebuild to the next, by the text they were made from (``hooks/_serve.py``).
"""
from __future__ import annotations

import hashlib
import html as html_lib
import json
import re
import logging
import os
import posixpath
import sys
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, InclusionLevel, get_files
from mkdocs.utils import get_relative_url

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _serve  # noqa: E402
import directives  # noqa: E402
from _paths import cache_root, project_dir  # noqa: E402
from _serve import on_shutdown, on_startup  # noqa: E402,F401  (MkDocs calls them: serve or build)

log = logging.getLogger("mkdocs.hooks.figures")
_state: dict = {}


def _skipped() -> bool:
    return os.environ.get("MHA_SKIP_FIGURES") == "1"


def _kit():
    from figures._kit import build, contract

    return build, contract


class _Page:
    """Resolves one page's directives to requests, naming the page in every error."""

    def __init__(self, src_uri: str, scripts: dict):
        self.src_uri, self.scripts = src_uri, scripts

    def where(self, d) -> str:
        return f"{self.src_uri}:{d.line}: {d.raw}"

    def request(self, d, kind: str | None = None):
        _, contract = _kit()
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
            raise PluginError(str(exc)) from None

    def gallery(self, d) -> list:
        only, skip = d.options.get("only"), d.options.get("except")
        chapters = d.options["chapter"].split(",") if "chapter" in d.options else None
        known = {s.chapter for s in self.scripts.values()}
        for chapter in chapters or ():
            if chapter not in known:
                raise PluginError(f"{self.where(d)}: no chapter {chapter!r}; chapters: {', '.join(sorted(known))}")
        chosen = [s for n, s in sorted(self.scripts.items())
                  if s.kind == "figure" and (only is None or n.startswith(only))
                  and (skip is None or not n.startswith(skip))
                  and (chapters is None or s.chapter in chapters)]
        # In lecture order: where each figure first appears on a page, pages in nav order;
        # figures on no page last, by name.
        first = _state.get("first_seen", {})
        chosen.sort(key=lambda s: (first[s.name][0], s.name) if s.name in first else (len(first) + 1, s.name))
        if not chosen:
            raise PluginError(f"{self.where(d)}: the gallery selects no figure")
        return chosen

    def requests(self, found) -> list:
        out = []
        for d in found:
            if d.keyword == "download" or d.keyword in directives.NUMBERING:  # other hooks', not a figure
                continue
            if d.keyword == "gallery":
                out += [s.request() for s in self.gallery(d)]
            else:
                out.append(self.request(d, {"figure": "figure", "table": "table", "explorer": "figure"}.get(d.keyword)))
        return out


def _parse(text: str, where: str):
    try:
        return _serve.parse_directives(text, where)
    except directives.DirectiveError as exc:
        raise PluginError(str(exc)) from None


def on_config(config):
    _serve.begin(config)
    return config


def on_pre_build(*, config):
    """Find every request on the pages and start rendering: before the other hooks' ``on_files``
    (the downloads are built there), so that the figures start as early as they can."""
    if _skipped():
        return
    on_build_error(error=None)  # a rendering an earlier build left (under serve) is stopped
    build, contract = _kit()
    scripts_dir = project_dir(config) / "figures"
    try:
        scripts = contract.discover(scripts_dir)
    except contract.ContractError as exc:
        raise PluginError(str(exc)) from None
    requests, asked_by = [], {}
    # the pages MkDocs will find (on_files gets the same list, after the other hooks' work)
    pages = [f for f in get_files(config).documentation_pages() if f.abs_src_path and f.abs_src_path.endswith(".md")]
    _state["first_seen"] = _first_seen(pages, config)
    shown = set()  # requests a reader sees (figures, tables, explorers, galleries): their files are published
    galleries, sooner, later = set(), [], []  # requests in the order the pages will ask for them
    waiting = set()  # pages that ask for a figure, table or value
    for f in pages:
        text = Path(f.abs_src_path).read_text(encoding="utf-8")
        found, resolver = _parse(text, f.src_uri), _Page(f.src_uri, scripts)
        if any(d.keyword == "gallery" for d in found):
            galleries.add(f.src_uri)
        page_requests = resolver.requests(found)
        if page_requests:
            waiting.add(f.src_uri)
        for request in page_requests:
            requests.append(request)
            (later if f.src_uri in galleries else sooner).append(request)
            asked_by.setdefault((request.name, request.params), []).append(f.src_uri)
        # a {{ value }} only reads data(): a variant with parameters is linked from nowhere, so its
        # files are not published (they were hundreds of MB of position tables)
        shown.update(resolver.requests([d for d in found if d.keyword != "value"]))
    # a variant only a {{ value }} reads is never drawn: data() and its JSON alone
    value_only = [r for r in requests if r not in shown and r.params]
    try:
        # Renders start now, in the order the pages will ask for them, and run while MkDocs
        # writes the pages: each page waits only for its own figures (_result).
        rendering = build.start(requests, scripts_dir, cache_root(config) / "figures", log=log.info,
                                scripts=scripts, data_only=value_only, order=sooner + later)
    except build.FigureError as exc:
        raise _page_error(exc, asked_by) from None
    except contract.ContractError as exc:
        raise PluginError(str(exc)) from None
    _state.update(rendering=rendering, results={}, published=set(), shown=shown, asked_by=asked_by,
                  scripts=scripts, config=config, names=sorted({r.name for r in requests}),
                  waiting=waiting - galleries, galleries=galleries)


def on_files(files, *, config):
    """Each rendered script's source and its script page join the site; pages are put in the
    order that lets them be written while the figures render (:func:`_pages_in_render_order`)."""
    if _skipped():
        return files
    scripts = _state["scripts"]
    # The mhalib wheel hooks/site_downloads.py published (a fixture site may have none).
    wheel = next((f.src_uri for f in files if f.src_uri.startswith("downloads/") and f.src_uri.endswith(".whl")), None)
    for name in _state["names"]:
        files.append(File.generated(config, f"figures/{name}.py", content=scripts[name].path.read_bytes()))
        files.append(File.generated(config, f"scripts/{name}.md", content=_script_page(scripts[name], wheel),
                                    inclusion=InclusionLevel.NOT_IN_NAV))
    pages = list(files.documentation_pages())
    _pages_in_render_order(files, [f for f in pages if f.src_uri in _state["waiting"]],
                           [f for f in pages if f.src_uri in _state["galleries"]])
    return files


def _pages_in_render_order(files, with_figures: list, galleries: list) -> None:
    """MkDocs converts pages in the order of ``files``. Pages that wait for no figure (the API
    reference, the labs, whose notebooks run meanwhile) go first, then the pages with figures,
    each waiting only for its own, then the galleries, which wait for every figure; so pages
    are written while the figures render. :func:`on_env` puts the files back in their order
    before anything is written (the sitemap and the search index list pages in that order)."""
    _state["order"] = list(files)
    for f in with_figures + galleries:
        files.remove(f)
        files.append(f)


def _restore_order(files) -> None:
    order = _state.pop("order", None)
    if order is None:
        return
    rank = {id(f): i for i, f in enumerate(order)}
    now = list(files)
    for f in now:
        files.remove(f)
    for _, _, f in sorted((rank.get(id(f), len(rank)), i, f) for i, f in enumerate(now)):
        files.append(f)


def _page_error(exc, asked_by) -> PluginError:
    pages = sorted(set(asked_by.get((exc.name, exc.params), [])))
    return PluginError((f"{', '.join(pages)}: " if pages else "") + str(exc))


def _result(request, files):
    """The result of ``request``, waiting for its render; its files join the site's files
    before the page that shows it is written (MkDocs checks the page's links against them)."""
    results = _state["results"]
    if request not in results:
        build, _ = _kit()
        try:
            results[request] = _state["rendering"].result(request)
        except build.FigureError as exc:
            raise _page_error(exc, _state["asked_by"]) from None
        _publish(results[request], files)
    return results[request]


def _publish(r, files) -> None:
    """``r``'s files as site files, once: all of them for a request a reader sees and for a
    script's default (what its script page and CLI line make); none for a variant only a
    ``{{ value }}`` reads (they were hundreds of MB of position tables)."""
    if r.request in _state["published"]:
        return
    _state["published"].add(r.request)
    config = _state["config"]
    if not (r.request in _state["shown"] or not r.request.params):
        return
    for role, name in r.request.outputs(r.kind).items():
        in_page = role == "md" or (role == "explorer" and not _fetched(r.files[name]))  # see _explorer_data
        if not in_page:
            files.append(File.generated(config, f"figures/{name}", content=r.files[name]))
    if r.request.wide_csv() in r.files:
        files.append(File.generated(config, f"figures/{r.request.wide_csv()}", content=r.files[r.request.wide_csv()]))


def on_env(env, *, config, files):
    """Every render done (a failure fails the build here at the latest), every result's files
    published, the statistics logged (and written to ``$MHA_BUILD_STATS``)."""
    if _skipped() or "rendering" not in _state:
        return env
    _restore_order(files)
    build, _ = _kit()
    try:
        results, stats = _state["rendering"].finish()
    except build.FigureError as exc:
        raise _page_error(exc, _state["asked_by"]) from None
    for r in results:
        _state["results"].setdefault(r.request, r)
        _publish(r, files)
    if os.environ.get("MHA_BUILD_STATS"):
        Path(os.environ["MHA_BUILD_STATS"]).write_text(json.dumps(stats.as_dict(), indent=1), encoding="utf-8")
    return env


def on_build_error(*, error):
    """A build that fails anywhere stops its renders (``mkdocs serve`` keeps running)."""
    rendering = _state.pop("rendering", None)
    if rendering is not None:
        rendering.stop()


# ---- lecture order, script pages ----------------------------------------------------------------

def _nav_paths(nav) -> list:
    """The Markdown sources of ``mkdocs.yml``'s nav, in reading order."""
    out = []
    for item in nav or ():
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict):
            for value in item.values():
                out += _nav_paths(value) if isinstance(value, list) else [value] if isinstance(value, str) else []
    return out


def _nav_titles(nav) -> dict:
    out = {}
    for item in nav or ():
        if isinstance(item, dict):
            for title, value in item.items():
                if isinstance(value, str):
                    out[value] = title
                elif isinstance(value, list):
                    out.update(_nav_titles(value))
    return out


def _first_seen(pages, config) -> dict:
    """Figure name -> (order, page src_uri, page title, caption) where it first appears: pages in
    nav order (pages outside the nav after them, by path), gallery pages not counted."""
    order = {p: i for i, p in enumerate(_nav_paths(config["nav"]))}
    titles = _nav_titles(config["nav"])
    seen: dict = {}
    for f in sorted(pages, key=lambda f: (order.get(f.src_uri, len(order)), f.src_uri)):
        text = Path(f.abs_src_path).read_text(encoding="utf-8")
        found = _parse(text, f.src_uri)
        if any(d.keyword == "gallery" for d in found):
            continue
        heading = re.search(r"^# (.+)$", text, flags=re.M)
        title = titles.get(f.src_uri) or (heading.group(1).strip() if heading else f.src_uri)
        for d in found:
            if d.keyword in ("figure", "explorer") and d.name not in seen:
                caption = d.caption if d.keyword == "figure" else d.options.get("caption", "")
                seen[d.name] = (len(seen), f.src_uri, title, caption)
    return seen


def _script_page(script, wheel: str | None) -> str:
    """The Markdown of ``scripts/NAME.md``: how to run the script, and its source (put in by
    :func:`on_page_content`, after Markdown, so nothing in the source is read as Markdown)."""
    ext = "svg" if script.kind == "figure" else "md"
    src = f"scripts/{script.name}.md"
    title = script.title.rstrip(".")
    seen = _state.get("first_seen", {}).get(script.name)
    return (f"---\ntitle: {json.dumps(script.name + '.py: ' + title)}\nsearch:\n  exclude: true\n---\n\n"
            f"# `{script.name}.py`\n\n{_md_text(title)}.\n\n"
            "Run it outside this repository: install the library wheel (it carries `mhalib` and the "
            "figure kit the script imports; Python 3.11 or newer), then run the script with the "
            f"file to write:\n\n```bash\npip install {posixpath.basename(wheel) if wheel else 'mhalib'}\n"
            f"python {script.name}.py --out {script.name}.{ext}\n```\n\n"
            f"[Download {script.name}.py]({get_relative_url('figures/' + script.name + '.py', src)}){{ download }} · "
            + (f"[{posixpath.basename(wheel)}]({get_relative_url(wheel, src)}){{ download }} · "
               f"[Get the code]({get_relative_url('get_the_code.md', src)}) · " if wheel else "")
            + f"`python {script.name}.py --help` lists its options."
            + (f" Shown on: [{_md_text(seen[2])}]({get_relative_url(seen[1], src)}).\n\n" if seen else "\n\n")
            + f'<div class="mha-script-source" data-script="{script.name}"></div>\n')


_highlighted = _serve.Memo("script source")  # a script's source -> its highlighted HTML


def _highlight(code: str) -> str:
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer

    return highlight(code, PythonLexer(), HtmlFormatter(nowrap=True))


def on_page_content(html, *, page, config, files):
    """Put the highlighted source into a script page (see :func:`_script_page`)."""
    if _skipped() or not page.file.src_uri.startswith("scripts/"):
        return html

    def source(m):
        script = _state["scripts"][m.group(1)]
        text = script.path.read_text(encoding="utf-8")
        code = _highlighted.get((text,), lambda: _highlight(text))
        return (f'<div class="language-python highlight mha-script-source"><pre><span></span>'
                f"<code>{code}</code></pre></div>")

    return re.sub(r'<div class="mha-script-source" data-script="([a-z0-9_]+)"></div>', source, html)


# ---- Markdown for each directive ---------------------------------------------------------------

def _link(page, target: str) -> str:
    """``target`` (relative to docs/) as a link from ``page``'s source file."""
    return get_relative_url(target, page.file.src_uri)


def _url(page, target: str) -> str:
    """``target`` (a site path) as a URL from the *built* page: for raw HTML, which MkDocs does
    not rewrite as it does Markdown links (``attention/`` needs ``../figures/...``)."""
    return get_relative_url(target, page.url or ".")


def _reuse_row(page, result, kind: str) -> str:
    _, contract = _kit()
    request = result.request
    names = request.outputs(kind)

    def get(label, role, title):
        return f'[{label}]({_link(page, "figures/" + names[role])} "{title}"){{ download }}'

    links = []
    if kind == "figure":
        links += [f"SVG ({get('light', 'svg', 'SVG, light')} · {get('dark', 'svg_dark', 'SVG, dark')})",
                  f"PNG ({get('light', 'png', 'PNG, light')} · {get('dark', 'png_dark', 'PNG, dark')})",
                  get("PDF", "pdf", "PDF")]
    links.append(get("CSV", "csv", "CSV, one value a row"))
    if request.wide_csv() in result.files:
        links.append(f'[wide CSV]({_link(page, "figures/" + request.wide_csv())} "CSV, each matrix as a grid"){{ download }}')
    links += [get("JSON", "json", "JSON, every digit"),
              f"[script]({_link(page, 'scripts/' + request.name + '.md')})"]
    return (f"Reuse: {' · '.join(links)} · `{contract.cli_line(request)}`"
            f"<br>{_credit(page, request)}\n{{ .mha-reuse }}\n")


def _credit(page, request) -> str:
    """A credit line a teacher can paste under the figure in their own material (CC BY 4.0 asks for one)."""
    site = _state["config"]["site_name"]
    url = (_state["config"]["site_url"] or "") + page.url
    title = request.script.title.rstrip(".").replace("[", "(").replace("]", ")")
    title = re.sub(r"([\\`*_])", r"\\\1", html_lib.escape(title))  # text, not Markdown emphasis
    return (f'<span class="mha-credit">Credit: “{title}”, from <cite>{html_lib.escape(site)}</cite>, '
            f'{html_lib.escape(url)}, <a href="https://creativecommons.org/licenses/by/4.0/">CC BY 4.0</a></span>')


#: Screens narrower than this get a figure's phone layout (``NARROW = True`` scripts).
NARROW_BELOW_PX = 600
#: The first figures of a page load at once (they are likely in the first screen: a lazy one
#: would be the page's largest paint, late); the rest load as the reader scrolls to them.
EAGER_FIGURES = 1


def _svg_size(svg: bytes, name: str) -> tuple[int, int]:
    """The CSS pixel size (width, height) of an SVG drawn at its own size (its ``pt`` width and
    height, 1 pt = 4/3 px): the ``width``/``height`` attributes that reserve its space."""
    m = re.search(rb'<svg[^>]*?\bwidth="([0-9.]+)pt"[^>]*?\bheight="([0-9.]+)pt"', svg[:2000])
    if not m:
        raise PluginError(f"figure file {name} has no width/height in pt: its space cannot be reserved")
    return round(float(m.group(1)) * 4 / 3), round(float(m.group(2)) * 4 / 3)


def _picture(page, result, role: str, alt: str, loading: str, scheme: str) -> str:
    """One theme's image; with a ``<source>`` for phones when the script has a narrow layout."""
    names = result.request.outputs("figure")
    width, height = _svg_size(result.files[names[role]], names[role])
    img = (f'<img src="{_url(page, "figures/" + names[role])}#only-{scheme}" alt="{html_lib.escape(alt)}" '
           f'width="{width}" height="{height}" loading="{loading}" decoding="async">')
    narrow = "svg_narrow" + ("_dark" if scheme == "dark" else "")
    if narrow not in names:
        return img
    nw, nh = _svg_size(result.files[names[narrow]], names[narrow])
    return (f'<picture><source media="(max-width: {NARROW_BELOW_PX - 0.02}px)" '
            f'srcset="{_url(page, "figures/" + names[narrow])}" width="{nw}" height="{nh}">{img}</picture>')


def _figure(page, d, result) -> str:
    if not d.alt:
        raise PluginError(f"{page.file.src_uri}:{d.line}: figure {d.name!r} has no alt text: "
                          f"write ![what it shows](figures/{d.name}.svg)")
    where_prefix = posixpath.normpath(posixpath.join(posixpath.dirname(page.file.src_uri), d.prefix + "figures"))
    if where_prefix != "figures":
        raise PluginError(f"{page.file.src_uri}:{d.line}: {d.raw!r} points to {where_prefix}/, not to figures/")
    seen = _state.setdefault("figures_on_page", {})
    count = seen[page.file.src_uri] = seen.get(page.file.src_uri, 0) + 1
    loading = "eager" if count <= EAGER_FIGURES else "lazy"
    cap = f"\n  <figcaption>{d.caption}</figcaption>" if d.caption else ""
    return (
        f'<figure class="mha-figure" markdown="span">\n'
        f"  {_picture(page, result, 'svg', d.alt, loading, 'light')}\n"
        f"  {_picture(page, result, 'svg_dark', d.alt, loading, 'dark')}{cap}\n"
        f"</figure>\n\n"
        f"{_reuse_row(page, result, 'figure')}"
    )


def _lookup(data, path: str, where: str):
    value = data
    for part in path.split("."):
        try:
            value = value[int(part)] if isinstance(value, list) else value[part]
        except (KeyError, IndexError, ValueError, TypeError):
            raise PluginError(f"{where}: {path!r} is not in the figure's data (failed at {part!r})") from None
    return value


def _value(page_where: str, d, result) -> str:
    value = _lookup(result.data, d.args[0], page_where)
    fmt = d.args[1] if len(d.args) > 1 else ""
    if isinstance(value, (dict, list)):
        raise PluginError(f"{page_where}: {d.args[0]!r} is a {type(value).__name__}, not a number or text")
    try:
        return format(value, fmt) if fmt else str(value)
    except (ValueError, TypeError) as exc:
        raise PluginError(f"{page_where}: cannot format {value!r} with {fmt!r}") from exc


# An explorer's payload up to this size is written into its page; a larger one (the model
# viewers': hundreds of KB of attention weights) is a file of its own that the widget fetches,
# so the page's HTML stays small and its text shows before the data has arrived.
INLINE_EXPLORER_MAX = 16_000


def _fetched(payload: bytes) -> bool:
    return len(payload) > INLINE_EXPLORER_MAX


def _explorer_data(page, result) -> str:
    """The payload's element: inline JSON, or a ``data-src`` URL with the payload's hash (a
    browser's cached copy of an older payload is never used with a newer page)."""
    payload = result.file("explorer")
    if not _fetched(payload):
        return f'<script type="application/json" class="mha-explorer-data">{result.explorer}</script>'
    name = result.request.outputs(result.kind)["explorer"]  # published by on_files under figures/
    version = hashlib.sha256(payload).hexdigest()[:12]
    return (f'<script type="application/json" class="mha-explorer-data" '
            f'data-src="{_url(page, "figures/" + name)}?v={version}"></script>')


def _explorer(page, d, result) -> str:
    alt, caption = d.options.get("alt", ""), d.options.get("caption", "")
    widget = result.request.script.explorer
    prefix = _link(page, "figures/x")[: -len("figures/x")]  # "" or "../" from this page to docs/
    static = directives.Directive("figure", d.start, d.end, d.line, d.raw, name=d.name, alt=alt,
                                  caption=caption, prefix=prefix)
    return (
        f'<div class="mha-explorer-static" data-static-for="{widget}" markdown="1">\n\n'
        f"{_figure(page, static, result)}\n</div>\n\n"
        f'<div class="mha-explorer" data-explorer="{widget}">{_explorer_data(page, result)}'
        f'<div class="mha-explorer-ui" hidden></div></div>\n'
    )


def _gallery(page, d, resolver) -> str:
    """Each figure: its title as the heading (anchor: the script's name), the figure, the
    caption of the page it first appears on (or its docstring), its reuse row and that page."""
    blocks = []
    first = _state.get("first_seen", {})
    for script in resolver.gallery(d):
        title = script.title.rstrip(".")
        heading = _md_text(title)
        seen = first.get(script.name)
        caption = _gallery_caption(page, resolver, seen[3]) if seen and seen[3] else \
            _md_text(re.sub(r"\s*Page: [^.]*\.", "", script.description).strip())
        alt = title.replace("[", "(").replace("]", ")")
        static = directives.Directive("figure", 0, 0, d.line, d.raw, name=script.name, alt=alt,
                                      caption=caption.replace('"', "”"),
                                      prefix=_link(page, "figures/x")[: -len("figures/x")])
        back = (f"Appears on: [{seen[2]}]({_link(page, seen[1])})" if seen else "Appears on no page yet.")
        blocks.append(f"## {heading} {{ #{script.name} }}\n\n"
                      f'<div class="mha-gallery-item" markdown="1">\n\n'
                      f"{_figure(page, static, _result(script.request(), _state['files']))}\n"
                      f"{back}\n{{ .mha-appears }}\n\n</div>\n")
    return "\n".join(blocks)


def _md_text(text: str) -> str:
    """``text`` as Markdown that shows it as written (no emphasis, links, HTML or attributes)."""
    return re.sub(r"([\\`*_{}\[\]#])", r"\\\1", html_lib.escape(text, quote=False))


def _gallery_caption(page, resolver, caption: str) -> str:
    """A page's caption with its ``{{ value }}`` directives filled in, as on that page."""
    found = [x for x in _parse(caption, page.file.src_uri) if x.keyword == "value"]
    return directives.substitute(caption, found, lambda x: _value(resolver.where(x), x,
                                                                  _result(resolver.request(x), _state["files"])))


def on_page_markdown(markdown, *, page, config, files):
    if _skipped():
        return markdown
    _state.setdefault("figures_on_page", {})[page.file.src_uri] = 0  # a rebuild (serve) counts afresh
    _state["files"] = files
    resolver = _Page(page.file.src_uri, _state["scripts"])

    def replace(d):
        where = resolver.where(d)
        if d.keyword == "gallery":
            return _gallery(page, d, resolver)
        result = _result(resolver.request(d), files)
        if d.keyword == "figure":
            return _figure(page, d, result)
        if d.keyword == "table":
            md = result.file("md").decode("utf-8")
            return f"{md}\n{_reuse_row(page, result, 'table')}"
        if d.keyword == "value":
            return _value(where, d, result)
        return _explorer(page, d, result)

    # Block and inline directives first (a gallery or an explorer writes figure references),
    # then the figure references, so each pass reads Markdown the grammar knows.
    first = [d for d in _parse(markdown, page.file.src_uri) if d.keyword != "figure"]
    for d in first:
        if d.keyword == "download":
            raise PluginError(f"{resolver.where(d)}: download directives are replaced by hooks/site_downloads.py, "
                              "which must come before hooks/site_figures.py in mkdocs.yml's hooks")
        if d.keyword in directives.NUMBERING:
            raise PluginError(f"{resolver.where(d)}: references and equation labels are replaced by "
                              "hooks/site_numbering.py, which must come before hooks/site_figures.py in mkdocs.yml's hooks")
    markdown = directives.substitute(markdown, first, replace)
    figures_now = [d for d in _parse(markdown, page.file.src_uri) if d.keyword == "figure"]
    return directives.substitute(markdown, figures_now, replace)


def on_serve(server, *, config, builder):
    """Rebuild on edits to the figure scripts and to the mhalib that renders them."""
    import importlib.util

    lib = Path(importlib.util.find_spec("mhalib").origin).resolve().parent
    for folder in (project_dir(config) / "figures", lib):
        if folder.is_dir():
            server.watch(str(folder))
    return server
