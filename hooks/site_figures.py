"""MkDocs hook: the figures, tables, numbers, explorers and galleries the pages reference.

The MkDocs adapter of the figure step. What each directive becomes is :mod:`figure_markdown`
(plain functions, no MkDocs); rendering and the cache are :mod:`figures._kit.build`. Here
the pages are read for requests and the renders started (``on_pre_build``), each result's
files join the site's files, the pages wait for their own figures, and MkDocs' events call the
emitters (``on_page_markdown``). Every error names the page, the line and the directive, and
stops the build.

``MHA_SKIP_FIGURES=1`` skips the figure step (the benchmark's "plain build" baseline): no
figure is rendered, read from the cache or published, and directives stay as written; the
script pages stay (they are pages of the site, made from the scripts' sources, not from the
cache), so the baseline has the same pages as a real build;
``MHA_BUILD_STATS=FILE`` writes the render statistics there as JSON; with ``MHA_TRACE_LIB=1``
they say which mhalib files each script's render ran (``lib_run``: the tests' shared build sets
it, to hold each script's cache key to what it runs).

Under ``mkdocs serve`` the pages' directives and the script pages' highlighted sources are kept
from one rebuild to the next, by the text they were made from (``hooks/_serve.py``).
"""
from __future__ import annotations

import gzip
import json
import logging
import os
import re
import sys
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, InclusionLevel, get_files

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _context  # noqa: E402
import _serve  # noqa: E402
import directives  # noqa: E402
import figure_markdown as M  # noqa: E402
import navigation  # noqa: E402
import provenance  # noqa: E402
from _paths import cache_root, project_dir  # noqa: E402
from _serve import on_shutdown, on_startup  # noqa: E402,F401  (MkDocs calls them: serve or build)

log = logging.getLogger("mkdocs.hooks.figures")
NO_ADDRESS = ("figures: the site has no public address (set SITE_URL=https://... to build it for one): "
              "credit lines name the course and the page without a URL, and pages carry no canonical link")


class FigureState:
    """What one build's figure step knows: what the emitters need (:attr:`site`) and the renders."""

    def __init__(self):
        self.config = None
        self.site = M.Site()
        self.names: list = []  # the scripts whose source and page join the site
        self.rendering = None  # build.Rendering, while renders run
        self.results: dict = {}  # request -> its result, once a page (or on_env) took it
        self.published: set = set()  # requests whose files joined the site
        self.shown: set = set()  # requests a reader sees (their files are published)
        self.asked_by: dict = {}  # (name, params) -> the pages that ask for it (errors name them)
        self.waiting: set = set()  # pages that wait for a figure, table or value
        self.galleries: set = set()  # gallery pages (they wait for every figure)
        self.order: list | None = None  # the site's files in MkDocs' order, while pages are reordered


def _fig(config) -> FigureState:
    return _context.of(config).step(FigureState)


def _skipped() -> bool:
    return os.environ.get("MHA_SKIP_FIGURES") == "1"


def _kit():
    from figures._kit import build, contract

    return build, contract


def _parse(text: str, where: str, source: str | None = None):
    """The directives of ``text``; with ``source`` (the page's own file), each on its line there."""
    try:
        return directives.on_source_lines(_serve.parse_directives(text, where), text, source)
    except directives.DirectiveError as exc:
        raise PluginError(str(exc)) from None


def _page(page) -> M.PageRef:
    """The emitters' view of an MkDocs page."""
    return M.PageRef(page.file.src_uri, page.url, page.title)


def on_config(config):
    _serve.begin(config)
    fig = _fig(config)
    fig.config = config
    fig.site.site_name, fig.site.project = config["site_name"], project_dir(config)
    # (each value carries what the build read around it only where a hook reads it back and drops it)
    fig.site.seen = any(Path(str(h)).name == "site_seen.py" for h in (config.get("hooks") or ()))
    fig.site.public_url = _public_url(config)
    if fig.site.public_url is None and _serve.once(NO_ADDRESS):  # once, not once a rebuild under serve
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
        scripts = _context.of(config).once(("scripts", str(scripts_dir)), lambda: contract.discover(scripts_dir))
    except contract.ContractError as exc:
        raise PluginError(str(exc)) from None
    requests, asked_by = [], {}
    # the pages MkDocs will find (on_files gets the same list, after the other hooks' work)
    pages = [f for f in get_files(config).documentation_pages() if f.abs_src_path and f.abs_src_path.endswith(".md")]
    fig.site.scripts, fig.site.first_seen = scripts, _first_seen(pages, config)
    if _skipped():  # the plain baseline: every script's page, no figure step
        fig.names = sorted(scripts)
        return
    shown = set()  # requests a reader sees (figures, tables, explorers, galleries): their files are published
    galleries, sooner, later = set(), [], []  # requests in the order the pages will ask for them
    waiting = set()  # pages that ask for a figure, table or value
    for f in pages:
        text = Path(f.abs_src_path).read_text(encoding="utf-8")
        found, resolver = _parse(text, f.src_uri), M.Resolver(f.src_uri, scripts, fig.site.first_seen)
        if any(d.keyword == "gallery" for d in found):
            galleries.add(f.src_uri)
        page_requests = _requests(resolver, found)
        if page_requests:
            waiting.add(f.src_uri)
        for request in page_requests:
            requests.append(request)
            (later if f.src_uri in galleries else sooner).append(request)
            asked_by.setdefault((request.name, request.params), []).append(f.src_uri)
        # a {{ value }} only reads data(): a variant with parameters is linked from nowhere, so its
        # files are not published (they were hundreds of MB of position tables)
        shown.update(_requests(resolver, found, values=False))
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


def _requests(resolver, found, *, values: bool = True) -> list:
    try:
        return resolver.requests(found, values=values)
    except M.FigureMarkdownError as exc:
        raise PluginError(str(exc)) from None


def on_files(files, *, config):
    """Each rendered script's source and its chapter's scripts page join the site; pages are put in the
    order that lets them be written while the figures render (:func:`_pages_in_render_order`)."""
    fig = _fig(config)
    site = fig.site
    scripts = site.scripts
    # The mhalib wheel hooks/site_downloads.py published (a fixture site may have none).
    wheel = next((f.src_uri for f in files if f.src_uri.startswith("downloads/") and f.src_uri.endswith(".whl")), None)
    site.wheel = wheel
    site.source = next((f.src_uri for f in files if f.src_uri.startswith("downloads/")
                        and f.src_uri.endswith("-src.tar.gz")), None)
    site.in_wheel = _wheel_names(files.get_file_from_path(wheel)) if wheel else frozenset()
    chapters: dict = {}
    for name in fig.names:
        files.append(File.generated(config, f"figures/{name}.py", content=scripts[name].path.read_bytes()))
        chapters.setdefault(M.scripts_page(scripts[name]), []).append(scripts[name])
    for path, members in sorted(chapters.items()):
        try:
            page = M.chapter_page(site, members, wheel)
        except M.FigureMarkdownError as exc:
            raise PluginError(str(exc)) from None
        files.append(File.generated(config, path, content=page, inclusion=InclusionLevel.NOT_IN_NAV))
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

    outputs = dict(r.request.outputs(r.kind))
    if r.request.wide_csv() in r.files:
        outputs["wide_csv"] = r.request.wide_csv()
    for role, name in outputs.items():
        in_page = role == "explorer" and not M.fetched(r.files[name], name)  # see figure_markdown.explorer_data
        served = M.served_name(role, name, r.files[name])
        if in_page:
            continue
        if served != name:  # a large data file, compressed (the same bytes every build: no name, no time)
            raw = r.files[name]
            packed = _serve.memo("gzip").get((raw,), lambda: gzip.compress(raw, compresslevel=6, mtime=0))
            files.append(_Download.generated(config, f"figures/{served}", content=packed))
        else:
            files.append(_Download.generated(config, f"figures/{name}", content=r.files[name])
                         if name.endswith(".md") else linked(name))


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

def _first_seen(pages, config) -> dict:
    """Figure name -> (order, page src_uri, page title, caption) where it first appears: pages in
    nav order (pages outside the nav after them, by path), gallery pages not counted."""
    listed = navigation.pages(config["nav"])
    order = {src: i for i, (_, _, src) in enumerate(listed)}
    titles = {src: title for _, title, src in listed if title is not None}
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


def _highlight(code: str) -> str:
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer

    return highlight(code, PythonLexer(), HtmlFormatter(nowrap=True))


_REUSE_ROW = re.compile(r'<p class="mha-reuse" data-prov="([^"]+)"')


@event_priority(60)  # before numbering (50) and every hook that reads the HTML: no value mark reaches them
def on_page_content(html, *, page, config, files):
    """Each value's marks become its ``mha-value`` span, and the page gets the records of the
    requests it shows (:mod:`provenance`); each script's highlighted source goes into its
    chapter's scripts page (:func:`figure_markdown.chapter_page`)."""
    fig = _fig(config)
    try:
        html, keys = provenance.spans(html, page.file.src_uri)
    except provenance.ProvenanceError as exc:
        raise PluginError(str(exc)) from None
    keys += [k for k in dict.fromkeys(_REUSE_ROW.findall(html)) if k not in keys]  # each reuse row's
    if page.toc:
        provenance.clean_toc(page.toc.items)
    if getattr(page, "_title_from_render", None):
        page._title_from_render = provenance.plain(page._title_from_render)
    if keys:
        html += provenance.records_html({k: _record(fig, page, k, files) for k in keys})
    if not page.file.src_uri.startswith("scripts/"):
        return html

    def source(m):
        script = fig.site.scripts[m.group(1)]
        text = script.path.read_text(encoding="utf-8")
        code = _serve.memo("script source").get((text,), lambda: _highlight(text))
        return (provenance.tests_html(script.name, _tests_index(fig), config.get("repo_url") or "")
                + f'<div class="language-python highlight mha-script-source"><pre><span></span>'
                f"<code>{code}</code></pre></div>")

    return re.sub(r'<div class="mha-script-source" data-script="([a-z0-9_]+)"></div>', source, html)


def _record(fig: FigureState, page, key: str, files) -> dict:
    """The provenance record of the request ``key`` as ``page`` shows it (links relative to it)."""
    from figures._kit import contract

    request = fig.site.provenance[key]
    script = request.script
    section = files.get_file_from_path(M.scripts_page(script))
    url = (M.site_url(M.PageRef(page.file.src_uri, page.url), section.url) if section else "") + f"#{script.name}"
    return provenance.record(request, command=contract.cli_line(request, "json"), script_url=url,
                             tests=_tests_index(fig), stored=_stored(fig),
                             data_files=contract.data_files_read(script, fig.site.scripts))


def _tests_index(fig: FigureState) -> dict:
    """:func:`provenance.tests_index` of the project's tests, once per build (under serve, again
    only when a test file changed)."""
    def compute():
        tests = project_dir(fig.config) / "tests"
        paths = sorted(tests.glob("test_*.py"))
        names = sorted(fig.site.scripts)
        functions = sorted({ref.rsplit(".", 1)[-1] for s in fig.site.scripts.values()
                            for kind, ref in s.lib_refs if kind == "use" and ref.count(".") == 1})
        parts = (repr(names), repr(functions), *[p.name + "\0" + p.read_text(encoding="utf-8") for p in paths])
        return _serve.memo("tests index").get(parts, lambda: provenance.tests_index(tests, names, functions))
    return _context.of(fig.config).once("tests index", compute)


def _stored(fig: FigureState) -> dict:
    """:func:`provenance.stored_files`, once per build."""
    from figures._kit.contract import DATA_DIR

    return _context.of(fig.config).once("stored files", lambda: provenance.stored_files(DATA_DIR))


#: A page's first heading, ATX (# Title) or setext (Title / ====): its title where the nav gives none.
_FIRST_HEADING = re.compile(r"^#[ \t]+(.+?)[ \t#]*$|^(\S.*)\n=+[ \t]*$", re.M)


def _no_value_in_title(here, markdown: str, meta: dict) -> None:
    """A page's title (its nav title, its first heading) and its front matter (title,
    description) are its name in the navigation, the credit lines, the gallery and link
    previews, which show them as written: a {{ value }} there is refused."""
    heading = _FIRST_HEADING.search(markdown)
    for what, text in (("title", here.title), ("first heading", heading and (heading[1] or heading[2])),
                       *((f"front matter's {k!r}", v) for k, v in (meta or {}).items() if isinstance(v, str))):
        if text and "{{" in text and directives.BRACES_RE.search(text):
            raise PluginError(f"{here.src_uri}: the page's {what} {text!r} holds a {{{{ ... }}}}: it is also the "
                              "page's name in the navigation, the credit lines, the gallery or a link preview, which "
                              "show it as written; put the number in the page's text")


def on_page_markdown(markdown, *, page, config, files):
    if _skipped():
        return markdown
    fig = _fig(config)
    site, here = fig.site, _page(page)
    _no_value_in_title(here, markdown, page.meta)
    site.figures_on_page[here.src_uri] = 0
    site.result_of = lambda request: _result(fig, request, files)
    resolver = M.Resolver(here.src_uri, site.scripts, site.first_seen)
    read = M.claims.tildes_as_read(markdown)  # (tildes a reader does not see are spaces: the same offsets)

    def replace(d):
        try:
            value = d.keyword == "value"
            return M.replace(site, here, d, resolver, equated=value and M.follows_equals(read, d.start, d.end),
                             read=M.seen.reading(read, d) if value and site.seen else "")
        except (M.FigureMarkdownError, directives.DirectiveError) as exc:
            raise PluginError(str(exc)) from None

    # Block and inline directives first (a gallery or an explorer writes figure references),
    # then the figure references, so each pass reads Markdown the grammar knows.
    first = [d for d in _parse(markdown, page.file.src_uri, _serve.page_source(page)) if d.keyword != "figure"]
    for d in first:
        if d.keyword == "download":
            raise PluginError(f"{resolver.where(d)}: download directives are replaced by hooks/site_downloads.py, "
                              "which runs first: list it in mkdocs.yml's hooks")
        if d.keyword in directives.NUMBERING:
            raise PluginError(f"{resolver.where(d)}: references and equation labels are replaced by "
                              "hooks/site_numbering.py, which runs first: list it in mkdocs.yml's hooks")
    try:  # a range of two values, "from {{ value a }} to {{ value b }}", rounded outward
        M.check_ranges(site, resolver, markdown, first)
        values = [d for d in first if d.keyword == "value"]
        if values and site.seen:  # (and, on the page as its author wrote it, no markup that lays it out otherwise: pass 106)
            M.claims.check_page_markup(resolver.where(values[0]), _serve.page_source(page) or markdown)
    except (M.FigureMarkdownError, M.claims.ClaimError, directives.DirectiveError) as exc:
        raise PluginError(str(exc)) from None
    markdown = directives.substitute(markdown, first, replace)
    figures_now = [d for d in _parse(markdown, page.file.src_uri, _serve.page_source(page)) if d.keyword == "figure"]
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
