"""MkDocs hook: the figures, tables, numbers, explorers and galleries the pages reference.

Thin glue. The page grammar is :mod:`directives`; what a figure is (its parameters, files,
command line) is :mod:`figures._kit.contract`; rendering and the cache are
:mod:`figures._kit.build`. Here directives become requests (``on_files``), results become
site files, and directives become Markdown (``on_page_markdown``). Every error names the
page, the line and the directive, and stops the build.

``MHA_SKIP_FIGURES=1`` turns the hook off (the benchmark's "plain build" baseline);
``MHA_BUILD_STATS=FILE`` writes the render statistics there as JSON.
"""
from __future__ import annotations

import html as html_lib
import json
import re
import logging
import os
import posixpath
import sys
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File
from mkdocs.utils import get_relative_url

sys.path.insert(0, str(Path(__file__).resolve().parent))
import directives  # noqa: E402
from _paths import cache_root, project_dir  # noqa: E402

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
        if chapters:  # in the order the directive names the chapters (the lecture's order)
            chosen.sort(key=lambda s: chapters.index(s.chapter))
        if not chosen:
            raise PluginError(f"{self.where(d)}: the gallery selects no figure")
        return chosen

    def requests(self, found) -> list:
        out = []
        for d in found:
            if d.keyword == "download":  # hooks/site_downloads.py's, not a figure
                continue
            if d.keyword == "gallery":
                out += [s.request() for s in self.gallery(d)]
            else:
                out.append(self.request(d, {"figure": "figure", "table": "table", "explorer": "figure"}.get(d.keyword)))
        return out


def _parse(text: str, where: str):
    try:
        return directives.parse(text, where=where)
    except directives.DirectiveError as exc:
        raise PluginError(str(exc)) from None


def on_files(files, *, config):
    if _skipped():
        return files
    build, contract = _kit()
    scripts_dir = project_dir(config) / "figures"
    try:
        scripts = contract.discover(scripts_dir)
    except contract.ContractError as exc:
        raise PluginError(str(exc)) from None
    requests, asked_by = [], {}
    for f in files.documentation_pages():
        if f.abs_src_path and f.abs_src_path.endswith(".md"):
            text = Path(f.abs_src_path).read_text(encoding="utf-8")
            for request in _Page(f.src_uri, scripts).requests(_parse(text, f.src_uri)):
                requests.append(request)
                asked_by.setdefault((request.name, request.params), []).append(f.src_uri)
    try:
        results, stats = build.render(requests, scripts_dir, cache_root(config) / "figures",
                                      log=log.info, scripts=scripts)
    except build.FigureError as exc:
        pages = sorted(set(asked_by.get((exc.name, exc.params), [])))
        raise PluginError((f"{', '.join(pages)}: " if pages else "") + str(exc)) from None
    except contract.ContractError as exc:
        raise PluginError(str(exc)) from None
    if os.environ.get("MHA_BUILD_STATS"):
        Path(os.environ["MHA_BUILD_STATS"]).write_text(json.dumps(stats.as_dict(), indent=1), encoding="utf-8")
    _state.update(results={r.request: r for r in results}, scripts=scripts, config=config)
    published = set()
    for r in results:
        roles = ("svg", "svg_dark", "png", "csv") if r.kind == "figure" else ("csv",)
        for role in roles:
            name = r.request.outputs(r.kind)[role]
            files.append(File.generated(config, f"figures/{name}", content=r.files[name]))
        if r.request.name not in published:
            published.add(r.request.name)
            source = scripts[r.request.name].path.read_bytes()
            files.append(File.generated(config, f"figures/{r.request.name}.py", content=source))
    return files


# ---- Markdown for each directive ---------------------------------------------------------------

def _link(page, target: str) -> str:
    """``target`` (relative to docs/) as a link from ``page``'s source file."""
    return get_relative_url(target, page.file.src_uri)


def _reuse_row(page, request, kind: str) -> str:
    _, contract = _kit()
    names = request.outputs(kind)
    links = []
    if kind == "figure":
        links += [f"[SVG]({_link(page, 'figures/' + names['svg'])}){{ download }}",
                  f"[PNG]({_link(page, 'figures/' + names['png'])}){{ download }}"]
    links += [f"[CSV]({_link(page, 'figures/' + names['csv'])}){{ download }}",
              f"[script]({_link(page, 'figures/' + request.name + '.py')}){{ download }}"]
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


def _figure(page, d, result) -> str:
    if not d.alt:
        raise PluginError(f"{page.file.src_uri}:{d.line}: figure {d.name!r} has no alt text: "
                          f"write ![what it shows](figures/{d.name}.svg)")
    where_prefix = posixpath.normpath(posixpath.join(posixpath.dirname(page.file.src_uri), d.prefix + "figures"))
    if where_prefix != "figures":
        raise PluginError(f"{page.file.src_uri}:{d.line}: {d.raw!r} points to {where_prefix}/, not to figures/")
    names = result.request.outputs("figure")
    cap = f"\n  <figcaption>{d.caption}</figcaption>" if d.caption else ""
    return (
        f'<figure class="mha-figure" markdown="span">\n'
        f"  ![{d.alt}]({_link(page, 'figures/' + names['svg'])}#only-light){{ loading=lazy }}\n"
        f"  ![{d.alt}]({_link(page, 'figures/' + names['svg_dark'])}#only-dark){{ loading=lazy }}{cap}\n"
        f"</figure>\n\n"
        f"{_reuse_row(page, result.request, 'figure')}"
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


def _explorer(page, d, result) -> str:
    alt, caption = d.options.get("alt", ""), d.options.get("caption", "")
    widget = result.request.script.explorer
    prefix = _link(page, "figures/x")[: -len("figures/x")]  # "" or "../" from this page to docs/
    static = directives.Directive("figure", d.start, d.end, d.line, d.raw, name=d.name, alt=alt,
                                  caption=caption, prefix=prefix)
    return (
        f'<div class="mha-explorer-static" data-static-for="{widget}" markdown="1">\n\n'
        f"{_figure(page, static, result)}\n</div>\n\n"
        f'<div class="mha-explorer" data-explorer="{widget}"><script type="application/json" '
        f'class="mha-explorer-data">{result.explorer}</script><div class="mha-explorer-ui" hidden></div></div>\n'
    )


def _gallery(page, d, resolver) -> str:
    blocks = []
    for script in resolver.gallery(d):
        title = script.title.rstrip(".").replace("[", "(").replace("]", ")")
        body = script.description.replace('"', "”")
        blocks.append(f'## {script.name}\n\n![{title}]({_link(page, "figures/" + script.name + ".svg")} "{body}")\n')
    return "\n".join(blocks)


def on_page_markdown(markdown, *, page, config, files):
    if _skipped():
        return markdown
    results, scripts = _state["results"], _state["scripts"]
    resolver = _Page(page.file.src_uri, scripts)

    def replace(d):
        where = resolver.where(d)
        if d.keyword == "gallery":
            return _gallery(page, d, resolver)
        result = results[resolver.request(d)]
        if d.keyword == "figure":
            return _figure(page, d, result)
        if d.keyword == "table":
            md = result.file("md").decode("utf-8")
            return f"{md}\n{_reuse_row(page, result.request, 'table')}"
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
