"""MkDocs hook: render the figures, tables and numbers the pages reference.

Page syntax (plain Markdown that reads well in the source):

* a figure:  ``![alt text](figures/NAME.svg "Caption")``, optionally with parameters
  ``figures/NAME.svg?d_model=4&n_positions=8``;
* a table, on a line of its own:  ``{{ table NAME }}`` or ``{{ table NAME?param=value }}``;
* a number in prose:  ``{{ value NAME path.to.item .4f }}`` (a Python format spec);
* every figure script at once, on a line of its own:  ``{{ gallery }}``, or a part of
  them: ``{{ gallery only=bert_ }}``, ``{{ gallery except=bert_ }}`` (name prefixes).

Rendering and caching live in :mod:`figures._build`; this hook only finds references,
adds the rendered files to the site with ``File.generated`` and rewrites the Markdown.
A failing script stops the build with its name and traceback.
"""
from __future__ import annotations

import logging
import os
import re
import sys
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File

sys.path.insert(0, str(Path(__file__).resolve().parent))
import site_explorers  # noqa: E402
from _paths import cache_root, project_dir  # noqa: E402

log = logging.getLogger("mkdocs.hooks.figures")

FIGURE_RE = re.compile(
    r'!\[(?P<alt>[^\]]*)\]\((?P<prefix>(?:\.\./)*)figures/(?P<name>[a-z0-9_]+)\.svg'
    r'(?:\?(?P<query>[^\s)"]*))?(?:\s+"(?P<caption>[^"]*)")?\)'
)
TABLE_RE = re.compile(r'^\{\{\s*table\s+(?P<name>[a-z0-9_]+)(?:\?(?P<query>\S*))?\s*\}\}[ \t]*$', re.M)
VALUE_RE = re.compile(
    r'\{\{\s*value\s+(?P<name>[a-z0-9_]+)(?:\?(?P<query>\S*))?\s+(?P<path>[\w.\-]+)(?:\s+(?P<fmt>[^\s}]+))?\s*\}\}'
)

UNREAD_RE = re.compile(r"!\[[^\n]*?\]\([^)\s]*figures/[a-z0-9_]+\.svg(?!#only-)[^)]*\)|\{\{\s*(?:table|value|gallery)\b[^}]*\}\}")
GALLERY_RE = re.compile(r"^\{\{\s*gallery(?:\s+(?P<mode>only|except)=(?P<prefix>[a-z0-9_]+))?\s*\}\}[ \t]*$", re.M)

_state: dict = {}


def _figure_scripts(scripts_dir: Path, match=None) -> list[Path]:
    """Scripts that draw (have ``def draw``), read as text so nothing is imported.

    A gallery match ``only=PREFIX`` or ``except=PREFIX`` keeps or drops names starting with PREFIX.
    """
    out = [p for p in sorted(scripts_dir.glob("[!_]*.py")) if "\ndef draw(" in p.read_text(encoding="utf-8")]
    if match is not None and match["mode"]:
        keep = match["mode"] == "only"
        out = [p for p in out if p.stem.startswith(match["prefix"]) == keep]
    return out


def _request(match):
    from figures._build import Request, parse_params

    try:
        return Request(match["name"], parse_params(match["query"]))
    except ValueError as exc:
        raise PluginError(f"figure reference {match.group(0)!r}: {exc}") from exc


def _requests_in(text: str):
    for regex in (FIGURE_RE, TABLE_RE, VALUE_RE):
        for match in regex.finditer(text):
            yield _request(match)


def _skipped() -> bool:
    """``MHA_SKIP_FIGURES=1`` turns the hook off: the benchmark's "plain build" baseline."""
    return os.environ.get("MHA_SKIP_FIGURES") == "1"


def on_files(files, config):
    from figures._build import FigureError, render

    if _skipped():
        return files

    from figures._build import Request, parse_params

    scripts_dir = project_dir(config) / "figures"
    requests = set()
    for f in files.documentation_pages():
        if f.abs_src_path and f.abs_src_path.endswith(".md"):
            text = Path(f.abs_src_path).read_text(encoding="utf-8")
            requests.update(_requests_in(text))
            for ref in site_explorers.figure_references(text):  # the static fallback of each explorer
                name, _, query = ref.partition("?")
                requests.add(Request(name.removesuffix(".svg"), parse_params(query)))
            for match in GALLERY_RE.finditer(text):
                requests.update(Request(p.stem) for p in _figure_scripts(scripts_dir, match))
    try:
        results, stats = render(requests, scripts_dir, cache_root(config) / "figures", log=log.info)
    except FigureError as exc:
        raise PluginError(str(exc)) from None
    _state["results"] = {r.request: r for r in results}
    scripts = set()
    for r in results:
        for fname, path in sorted(r.files.items()):
            if fname.endswith(".md"):
                continue  # a table's Markdown goes into its page, not into the site as a page
            files.append(File.generated(config, f"figures/{fname}", abs_src_path=str(path)))
        scripts.add(r.request.name)
    for name in sorted(scripts):
        files.append(File.generated(config, f"figures/{name}.py", abs_src_path=str(scripts_dir / f"{name}.py")))
    return files


def _cli_line(req, ext: str = "svg") -> str:
    opts = ""
    for k, v in req.params:
        flag = "--" + k.replace("_", "-")
        if isinstance(v, bool):
            opts += f" {flag}" if v else f" --no-{k.replace('_', '-')}"
        else:
            opts += f" {flag} {v}"
    return f"python figures/{req.name}.py --out {req.name}.{ext}{opts}"


def _figure_block(match, result) -> str:
    req, pre = result.request, match["prefix"] or ""
    alt = match["alt"].strip()
    if not alt:
        raise PluginError(f"figure {req.name!r} has no alt text: write ![what it shows](figures/{req.name}.svg)")
    caption = match["caption"] or ""
    base = f"{pre}figures/{req.stem}"
    cap = f"\n  <figcaption>{caption}</figcaption>" if caption else ""
    return (
        f'<figure class="mha-figure" markdown="span">\n'
        f"  ![{alt}]({base}.svg#only-light){{ loading=lazy }}\n"
        f"  ![{alt}]({base}-dark.svg#only-dark){{ loading=lazy }}{cap}\n"
        f"</figure>\n\n"
        f"{_reuse_row(req, pre, image=True)}"
    )


def _reuse_row(req, pre: str, *, image: bool) -> str:
    base = f"{pre}figures/{req.stem}"
    links = []
    if image:
        links += [f"[SVG]({base}.svg){{ download }}", f"[PNG]({base}.png){{ download }}"]
    links += [f"[CSV]({base}.csv){{ download }}", f"[script]({pre}figures/{req.name}.py){{ download }}"]
    return f"Reuse: {' · '.join(links)} · `{_cli_line(req, 'svg' if image else 'md')}`\n{{ .mha-reuse }}\n"


def _lookup(data, path: str, where: str):
    value = data
    for part in path.split("."):
        if isinstance(value, dict) and part not in value and part.replace("_", " ") in value:
            part = part.replace("_", " ")  # keys with spaces ("Head 2 flipped") are written with _
        try:
            value = value[int(part)] if isinstance(value, list) else value[part]
        except (KeyError, IndexError, ValueError, TypeError):
            raise PluginError(f"{where}: {path!r} is not in the figure's data (failed at {part!r})") from None
    return value


def on_page_markdown(markdown, page, config, files):
    if _skipped():
        return markdown
    results = _state.get("results", {})

    def result_for(match):
        return results[_request(match)]

    def figure(match):
        return _figure_block(match, result_for(match))

    def table(match):
        r = result_for(match)
        md = r.files[f"{r.request.stem}.md"].read_text(encoding="utf-8")
        pre = "../" * page.file.src_uri.count("/")
        return f"{md}\n{_reuse_row(r.request, pre, image=False)}"

    def value(match):
        r = result_for(match)
        v = _lookup(r.data, match["path"], f"{page.file.src_uri}: {match.group(0)}")
        fmt = match["fmt"]
        try:
            return format(v, fmt) if fmt else str(v)
        except (ValueError, TypeError) as exc:
            raise PluginError(f"{page.file.src_uri}: {match.group(0)}: cannot format {v!r} with {fmt!r}") from exc

    def gallery(match):
        scripts_dir = project_dir(config) / "figures"
        pre = "../" * page.file.src_uri.count("/")
        blocks = []
        for script in _figure_scripts(scripts_dir, match):
            lines = _docstring(script).splitlines()
            title = lines[0].rstrip(".").replace("[", "(").replace("]", ")")
            body = " ".join(line.strip() for line in lines[1:] if line.strip()).replace("\"", "”")
            ref = f'![{title}]({pre}figures/{script.stem}.svg "{body}")'
            blocks.append(f"## {script.stem}\n\n{ref}\n")
        return "\n".join(blocks)

    markdown = GALLERY_RE.sub(gallery, markdown)
    markdown = TABLE_RE.sub(table, markdown)
    markdown = FIGURE_RE.sub(figure, markdown)
    markdown = VALUE_RE.sub(value, markdown)
    leftover = UNREAD_RE.search(markdown)
    if leftover:
        raise PluginError(f"{page.file.src_uri}: figure or placeholder not understood: {leftover.group(0)!r} "
                          "(alt text may not contain brackets; see the syntax in hooks/site_figures.py)")
    return markdown


def _docstring(script: Path) -> str:
    import ast

    return ast.get_docstring(ast.parse(script.read_text(encoding="utf-8"))) or script.stem


def on_serve(server, config, builder):
    root = project_dir(config)
    for folder in ("figures", "mhalib"):
        server.watch(str(root / folder))
    return server
