"""The serving process's memory: under ``mkdocs serve``, work whose inputs did not change is not done again.

``mkdocs serve`` rebuilds the whole site on every save, in the same process: a fresh config,
every page converted again, while the hook modules stay imported. A hook step that is a pure
function of a few inputs (a page's HTML and a URL, a script's source) keeps its results in a
:class:`Memo`, keyed by a hash of *all* those inputs, and the next rebuild takes them from
there. A changed input is a new key, so a result can only ever be served for exactly the
inputs it was computed from: an edit is never served stale.

Only under ``mkdocs serve``: ``mkdocs build`` (and ``gh-deploy``, ``serve --clean``, and any
build that did not go through MkDocs' ``on_startup``, such as a test's in-process ``build()``)
computes everything, every time. Each memo keeps the entries the last build used and drops
the rest, so memory stays at about one build's worth. Errors are never kept: a step that
fails fails again on the next rebuild, with its message.

Two owners of state, two lifetimes: what one build knows lives on that build's config
(:mod:`_context`); what the process keeps from one build to the next is the one
:class:`Session` here, :data:`SESSION` (whether it serves, the memos, the engine's hashes, the
build in progress, what was said once). No hook module keeps state of its own.

A hook that uses a memo exports ``on_startup``, ``on_shutdown`` and calls :func:`begin` from
its ``on_config`` (so the hooks can be listed in any order, and a fixture site may use any of
them); :func:`stats` says how many results each memo computed and reused in this build.
"""
from __future__ import annotations

import hashlib
import weakref
from pathlib import Path

from mkdocs.exceptions import PluginError


class Session:
    """What one process keeps between builds (under serve, between rebuilds)."""

    def __init__(self):
        self.serving = False
        self.memos: dict[str, Memo] = {}
        self.build = None  # a weak reference to the config of the build in progress
        self.engine: dict[str, str] = {}  # under serve: each engine file's hash when the server started
        self.said: set[str] = set()  # messages the process gives once, not once a rebuild

    def reset(self, serving: bool) -> None:
        self.serving = serving
        for memo in self.memos.values():
            memo.clear()
        self.engine = _hashes() if serving else {}
        self.said = set()

    def config(self):
        """The config of the build in progress (or the last one), or ``None``."""
        return self.build() if self.build is not None else None


def engine_files() -> list[Path]:
    """The Python the serving process keeps imported between rebuilds: the hooks' folder (MkDocs
    loads the hook files afresh on each rebuild, but not the modules they import: the page
    grammar, this module, the downloads) and the figure kit (the contract that writes each
    CLI line). Figure scripts and mhalib need no restart: each render is a fresh process."""
    files = sorted(Path(__file__).resolve().parent.glob("*.py"))
    try:
        import figures._kit as kit

        files += sorted(Path(kit.__file__).resolve().parent.rglob("*.py"))  # its subpackages too
    except ImportError:  # a fixture project without the kit
        pass
    return files


def _hashes() -> dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in engine_files() if p.is_file()}


SESSION = Session()


def stale_engine() -> list[str]:
    """The engine files added, removed or edited since ``mkdocs serve`` started (none outside serve)."""
    engine = SESSION.engine
    if not SESSION.serving or not engine:
        return []
    now = _hashes()
    return sorted(f for f in engine.keys() | now.keys() if engine.get(f) != now.get(f))


def on_startup(*, command, dirty):
    """MkDocs' first event (MkDocs >= 1.4): ``command`` is ``serve``, ``build`` or ``gh-deploy``;
    ``mkdocs serve --clean`` reports ``build``."""
    SESSION.reset(serving=command == "serve")


def on_shutdown():
    SESSION.reset(serving=False)


def serving() -> bool:
    return SESSION.serving


def once(message: str) -> bool:
    """True the first time this process asks about ``message`` (a note the build gives once,
    not once a page nor once a rebuild under serve)."""
    if message in SESSION.said:
        return False
    SESSION.said.add(message)
    return True


def begin(config) -> None:
    """A build starts with ``config`` (each serve rebuild loads a fresh one): results the last
    build did not use are dropped. Called by every memo-using hook; the first call per build counts.

    Under serve, a rebuild after an edit to the engine (:func:`engine_files`) stops with a
    message to restart: the process would mix the old modules with the new, and publish, say,
    the old CLI line or reject a new directive as unknown."""
    if SESSION.config() is config:
        return
    changed = stale_engine()
    if changed:
        raise PluginError(f"{', '.join(changed)} changed since `mkdocs serve` started; this process still runs "
                          "the old code (MkDocs reloads the hook files, not the modules they import), so it "
                          "will not build with it: stop the server and run `make serve` again")
    SESSION.build = weakref.ref(config)
    for m in SESSION.memos.values():
        m.next_build()


def key(*parts) -> str:
    """A hash of ``parts`` (str, bytes or None), each length-prefixed, so that no two lists of
    inputs share a key."""
    h = hashlib.sha256()
    for part in parts:
        data = b"\x00none" if part is None else part if isinstance(part, bytes) else str(part).encode("utf-8")
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


class Memo:
    """Results of one pure step, by a key covering every input it reads."""

    def __init__(self, name: str):
        self.name = name
        self.last: dict = {}  # the entries the previous build used
        self.now: dict = {}  # the entries this build used
        self.computed = self.reused = 0  # in this build

    def clear(self) -> None:
        self.last, self.now = {}, {}
        self.computed = self.reused = 0

    def next_build(self) -> None:
        self.last, self.now = self.now, {}
        self.computed = self.reused = 0

    def get(self, parts: tuple, compute):
        """``compute()``, or under serve the result it gave for the same ``parts``."""
        if not SESSION.serving:
            self.computed += 1
            return compute()
        k = key(*parts)
        if k in self.now:
            self.reused += 1
            return self.now[k]
        if k in self.last:
            self.reused += 1
            value = self.now[k] = self.last.pop(k)
            return value
        value = compute()  # an exception leaves nothing behind
        self.computed += 1
        self.now[k] = value
        return value


def memo(name: str) -> Memo:
    """The session's memo called ``name`` (made on first use)."""
    if name not in SESSION.memos:
        SESSION.memos[name] = Memo(name)
    return SESSION.memos[name]


def stats() -> dict[str, tuple[int, int]]:
    """``{memo name: (computed, reused)}`` for the build in progress (or the last one)."""
    return {m.name: (m.computed, m.reused) for m in SESSION.memos.values()}


def page_source(page) -> str | None:
    """The page's Markdown file as the author wrote it, where messages name lines (None for a
    notebook or a page the build made)."""
    try:
        return page.file.content_string if page.file.src_uri.endswith(".md") else None
    except (OSError, ValueError, TypeError):
        return None


def parse_directives(text: str, where: str) -> list:
    """:func:`directives.parse` (a pure function of the text and the name it reports errors
    under), kept under serve: each page is parsed by several hooks, on every rebuild."""
    import directives

    return list(memo("directives").get((text, where), lambda: tuple(directives.parse(text, where=where))))
