"""Render figures and tables for the site: fresh code, verified cache, both cores.

:func:`render` takes requests (a script and its canonical parameters, see
:mod:`figures._kit.contract`) and returns every output's bytes. Each result is cached in
``<cache>/<stem>-<key>/``, where the key hashes everything the output depends on (the
script and the figure scripts it imports, the data files they name, the ``mhalib`` modules
they reach, read from their source (:class:`contract.Library`), this machinery, the library
versions and the parameters). The last :data:`KEEP_PER_STEM` entries of each figure are kept,
so that reverting an edit finds the earlier render.

What keeps a wrong figure from being published:

* **Fresh code.** Missing entries are rendered in new worker processes, one pool per call,
  so a render never runs code imported before an edit (``mkdocs serve`` keeps its process).
  The workers are forked from a server that has imported numpy, matplotlib and the font
  tools once, and nothing of this project (:func:`_context`); where the platform has no
  fork server, they are spawned. After rendering, a worker hashes the sources again; if they changed
  while it worked, the result is thrown away, never cached under a key it does not match.
* **Watched reads.** While a render runs, an audit hook sees every file it opens and every
  program or connection it starts (:class:`_Reads`); a read beyond what the key covers (a
  data file not named with ``data_file``, a file outside the libraries, mhalib and the
  scripts) fails the render, naming it, and nothing is cached.
* **Verified entries.** Each entry has a ``manifest.json`` with every file's size and
  SHA-256. An entry is used only if all of its files match; the bytes returned are the
  bytes checked. A damaged or incomplete entry (a plain file in its place included) is
  discarded and rendered again, with a log line saying so. Within one process (``mkdocs
  serve``), an entry already verified is trusted without hashing again while its manifest
  reads the same and no file's size, mtime, ctime or inode changed (:func:`read_entry`).
* **Written once, atomically.** An entry is written to a temporary folder and renamed into
  place. If a concurrent build renamed the same entry first, its (verified) copy is used.
* **No render outlives its build.** A worker exits when the process that started it dies
  (``kill -9`` included), and a render that runs past its timeout (:func:`default_timeout`)
  fails the build naming the script, its workers killed.

Nothing here knows MkDocs; the site hook turns directives into requests and results into
pages and files.
"""
from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import json
import multiprocessing
import os
import re
import shutil
import signal
import sys
import time
import traceback
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import contract, store

MANIFEST = store.MANIFEST
#: Entries not used for this long are pruned by the next build that uses the cache.
PRUNE_AFTER_S = 30 * 24 * 3600
#: How many entries of one figure (one stem) are kept, the most recently used first.
KEEP_PER_STEM = 3
#: Seconds one render may take unless ``$MHA_RENDER_TIMEOUT`` says otherwise: far above the
#: slowest real render (about 20 s) on a loaded two-core machine.
DEFAULT_RENDER_TIMEOUT_S = 600.0
#: How long past its timeout a render that does not answer the worker's own alarm (stuck in
#: C code, the alarm signal blocked) may run before the build kills its workers.
_GRACE_S = 5.0
_BLAS_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS")


class FigureError(RuntimeError):
    """A figure or table script failed; the message names it and carries the traceback.

    ``name`` and ``params`` say which request failed (so a caller can name the pages that
    asked for it)."""

    def __init__(self, message: str, name: str | None = None, params=()):
        super().__init__(message)
        self.name, self.params = name, tuple(params)

    def __reduce__(self):  # raised in a worker process, re-raised in the caller
        return (FigureError, (str(self), self.name, self.params))


@dataclass
class Result:
    request: contract.Request
    kind: str
    files: dict  # file name -> bytes (verified against the entry's manifest)
    _data: dict | None = field(default=None, repr=False, compare=False)
    #: the cache entry the files were read from (a site links its files from there: store.link_copy)
    entry: Path | None = field(default=None, repr=False, compare=False)

    @property
    def data(self) -> dict:
        """``data()`` as JSON values, read from the verified JSON file when first asked for (a
        site reads a few values; parsing every figure's data took most of a warm build's figure step)."""
        if self._data is None:
            self._data = json.loads(self.files[self.request.outputs(self.kind)["json"]])
        return self._data

    def file(self, role: str) -> bytes:
        return self.files[self.request.outputs(self.kind)[role]]

    @property
    def explorer(self) -> str | None:
        """The explorer's payload as JSON text, safe inside an HTML ``<script>`` element."""
        name = self.request.outputs(self.kind).get("explorer")
        return self.files[name].decode("utf-8").replace("</", "<\\/") if name else None


@dataclass
class Stats:
    """What one :func:`render` call did; the hook logs it and hands it to tests and the bench."""

    total: int = 0
    cached: int = 0
    rendered: int = 0
    repaired: int = 0  # damaged entries discarded and rendered again
    workers: int = 0
    seconds: float = 0.0
    render_seconds: dict = field(default_factory=dict)  # stem -> seconds in the worker
    #: stem -> {step: seconds} inside the worker: ``data``, ``draw`` (``draw_narrow``) and
    #: each output by its role (``svg``, ``png_dark``, ``csv``, ...)
    format_seconds: dict = field(default_factory=dict)
    #: stem -> [worker pid, start, end] in seconds from the start of the figure step
    timeline: dict = field(default_factory=dict)
    #: script -> the mhalib files (``mhalib/...py``) whose functions ran while its renders ran
    #: (``data()``, the table, the first drawing with its layout: the other drawings draw the
    #: same figure in another theme or width), seen by ``sys.setprofile``; only when the
    #: environment sets ``MHA_TRACE_LIB=1`` (the tests' shared build: what each script uses,
    #: found without reading its source, against what its cache key covers)
    lib_run: dict = field(default_factory=dict)

    def line(self) -> str:
        fixed = f", {self.repaired} damaged entries re-rendered" if self.repaired else ""
        return (f"figures: {self.total} figures/tables, {self.cached} cached, {self.rendered} rendered"
                f"{fixed}, {self.workers} workers, {self.seconds:.1f} s")

    def as_dict(self) -> dict:
        return asdict(self)


# ---- one entry ---------------------------------------------------------------------------------

def _meta(request: contract.Request, kind: str, key: str) -> dict:
    """What an entry's manifest says it was made for (:mod:`figures._kit.store`'s rule)."""
    return dict(key=key, name=request.name, kind=kind)


def read_entry(entry: Path, request: contract.Request, kind: str, key: str) -> Result:
    """The entry's files, checked against its manifest (:func:`store.read`: every file hashed,
    except in a process that verified the entry before and saw none of its files change);
    ``ValueError`` (:class:`store.Damaged`) says what is wrong. The same :class:`Result` comes
    back while the entry is unchanged: its data, once parsed, is not parsed again (a
    ``{{ value }}`` of a large table parsed 50 MB of JSON on every save under serve)."""
    return store.read(entry, _meta(request, kind, key), expected=request.outputs(kind).values(),
                      make=lambda files: Result(request, kind, files, entry=entry))


def _write_outputs(module, script: contract.Script, request: contract.Request, out: Path,
                   kind: str | None = None, laid=None) -> dict:
    """Compute ``data()`` once and write every output of the request into ``out`` (for kind
    ``data``, its JSON alone); returns the seconds each step took (``data``, the draws, and
    each output by its role). ``laid``: called once the first drawing (light, wide) is drawn
    and laid out, before it is saved (:func:`export.write_many`)."""
    from . import export

    timings: dict = {}
    clock = time.perf_counter

    def timed(role, fn, *args):
        t0 = clock()
        value = fn(*args)
        timings[role] = timings.get(role, 0.0) + clock() - t0
        return value

    kind = kind or script.kind
    names = request.outputs(kind)
    data = timed("data", lambda: module.data(**request.kwargs))
    gaps = contract.not_finite(data, script.non_finite)
    if gaps:
        raise FigureError(contract.not_finite_message(script, gaps), script.name, request.params)
    timed("json", lambda: (out / names["json"]).write_text(export.to_json(data), encoding="utf-8"))
    if kind == "data":
        return timings
    timed("csv", lambda: (out / names["csv"]).write_text(export.to_csv(data), encoding="utf-8"))
    if script.explorer:
        payload = timed("explorer", module.explorer, data)
        if script.explorer_binary:  # a model's weights: bytes, fetched by the widget when the reader asks
            if not isinstance(payload, bytes):
                raise FigureError(f"{script.repo_path}: EXPLORER_BINARY is True, so explorer(data) returns bytes; got "
                                  f"{type(payload).__name__}", script.name, request.params)
            (out / names["explorer"]).write_bytes(payload)
        else:
            try:  # NaN and Infinity are not JSON: the page's JSON.parse would fail and the widget not start
                text = json.dumps(payload, separators=(",", ":"), allow_nan=False)
            except ValueError:
                where = ", ".join(repr(p) for p in contract.not_finite(payload)[:5])
                raise FigureError(f"{script.repo_path}: explorer(data) holds NaN or an infinity at {where}: the page's "
                                  "widget reads JSON, which has neither (give it finite numbers, or None where there "
                                  "is no value)", script.name, request.params) from None
            (out / names["explorer"]).write_text(text, encoding="utf-8")
    if script.kind == "table":
        timed("md", export.write, module, data, out / names["md"])
        return timings
    wide = timed("wide_csv", export.to_wide_csv, data, dict(script.grid_labels))
    if wide is not None:
        (out / request.wide_csv()).write_text(wide, encoding="utf-8")

    def draw(paths_by_role, *, theme, salt, layout="wide", draw_role="draw", like=None, then=None):
        t: dict = {}
        fixed = export.write_many(module, data, [out / names[r] for r in paths_by_role], theme=theme, salt=salt,
                                  layout=layout, timings=t, like=like, laid=then)
        timings[draw_role] = timings.get(draw_role, 0.0) + t.pop("draw")
        for role in paths_by_role:
            timings[role] = t[out / names[role]]
        return fixed

    # One drawing per theme and layout, laid out once and saved in each format (export.lay_out
    # fixes the layout, so each file is the bytes the command line writes for that format alone);
    # the dark drawing takes the light one's layout (a theme changes colours only: the same bytes
    # as laying it out again, in a fraction of the time; export.lay_out_like).
    light = draw(["svg", "pdf"], theme="light", salt=export.salt_for(request.stem), then=laid)
    draw(["svg_dark"], theme="dark", salt=export.salt_for(request.stem, "dark"), like=light)
    if script.narrow:
        light = draw(["svg_narrow"], theme="light", salt=export.salt_for(request.stem, "light", "narrow"),
                     layout="narrow", draw_role="draw_narrow")
        draw(["svg_narrow_dark"], theme="dark", salt=export.salt_for(request.stem, "dark", "narrow"),
             layout="narrow", draw_role="draw_narrow", like=light)
    return timings


class _LibTrace:
    """The source files whose functions run, seen by ``sys.setprofile`` while on (in a worker,
    only when ``MHA_TRACE_LIB=1``: :attr:`Stats.lib_run`). A Python profiler makes what it
    watches about 2.4 times slower (matplotlib makes millions of calls a figure), so a render
    is watched from ``data()`` to its first drawing's layout, not through every save.

    A function that answers from a cache runs nothing the profiler sees, so what a render uses
    would depend on which render of the worker came first. Two caches answer for what they
    hide: a memoized ``data()`` adds the files its first computation ran (:func:`_memoized`),
    and so does an ``lru_cache``'d function of mhalib that scores a hit while tracing (the files
    its computation ran, seen when it ran; its own file if that was before any trace)."""

    def __init__(self):
        self.files: set | None = None  # None: not tracing
        self._computed: dict = {}  # a cached function's code -> the files its computations ran
        self._open: list = []  # [frame, files] of the cached functions computing now
        self._cached: dict = {}  # code -> the lru_cache wrapper, for the functions of mhalib
        self._since: dict = {}  # the hits when this trace started

    def _see(self, frame, event, arg):
        if event == "call":
            name = frame.f_code.co_filename
            self.files.add(name)
            for _, files in self._open:
                files.add(name)
            if frame.f_code in self._cached:
                self._open.append((frame, {name}))
        elif event == "return" and self._open and self._open[-1][0] is frame:
            code = frame.f_code
            self._computed[code] = self._computed.get(code, set()) | self._open.pop()[1]

    def start(self) -> None:
        self._cached = {w.__wrapped__.__code__: w for name, module in list(sys.modules.items())
                        if name == contract.LIB or name.startswith(contract.LIB + ".")
                        for w in list(vars(module).values())
                        if callable(getattr(w, "cache_info", None)) and hasattr(getattr(w, "__wrapped__", None), "__code__")}
        self._open = []
        self._since = self.hits()
        self.files = set()
        sys.setprofile(self._see)

    def hits(self) -> dict:
        """The hits each cached function of mhalib has scored so far."""
        return {code: w.cache_info().hits for code, w in self._cached.items()}

    def hit_files(self, since: dict) -> set:
        """The files that the cached functions which scored a hit after ``since`` ran to compute."""
        return {f for code, w in self._cached.items() if w.cache_info().hits > since.get(code, 0)
                for f in self._computed.get(code, {code.co_filename})}

    def stop(self) -> set:
        sys.setprofile(None)
        files, self.files = (self.files or set()) | self.hit_files(self._since), None
        self._cached, self._open, self._since = {}, [], {}
        return files


_TRACE = _LibTrace()


#: What a render may not do at all: its output would depend on what no key holds.
_REFUSED_EVENTS = {"socket.connect": "connects to", "socket.getaddrinfo": "looks up the address of",
                   "subprocess.Popen": "runs the program", "os.system": "runs the command",
                   "os.exec": "runs the program", "os.posix_spawn": "runs the program", "os.spawn": "runs the program"}
#: What a render reads: a file opened, a folder listed.
_WATCHED = frozenset({"open", "os.listdir", "os.scandir"})


#: The installed distributions' metadata, wherever an editable install keeps it (the project's
#: own ``mhalib.egg-info``, setuptools' ``__editable__`` path hooks): torch lists entry points.
_METADATA = re.compile(r"[^/]+\.(dist|egg)-info(/|$)|/__editable__\.[^/]*$")


class _Reads:
    """The files a render opens for reading beyond what its key covers, and any program or
    network connection it starts, seen by an audit hook (:func:`sys.addaudithook`, in each
    worker) while a render runs.

    The contract reads a script's source for the ways to reach a file (contract._unkeyed_reach),
    but a path can be made in more ways than a reading of the source can follow (a keyed path's
    text edited, a library function that opens a file by a name of its own: pass thirty-nine).
    So the render itself is watched: a file is keyed if it lies in the Python installation (the
    libraries, whose versions the kit digest holds, and the packaged model, whose files it
    stats), in mhalib or the figure scripts (hashed by the key), or is a data file the script
    names with ``data_file`` (``keyed``); the render's own outputs, a font, and the system's
    /proc, /sys and /dev are allowed too. Anything else fails the render, naming what was read,
    instead of caching numbers an edit to that file would not re-render."""

    def __init__(self):
        self.roots: tuple | None = None  # None: not watching
        self.keyed: frozenset = frozenset()
        self.fonts: frozenset = frozenset()
        self.data_dir = ""
        self.found: list = []
        self.written: set = set()
        self._busy = False

    def start(self, roots, data_dir: Path, keyed, fonts=frozenset()) -> None:
        self.roots = tuple(sorted({os.path.realpath(r) for r in roots}))
        self.fonts = fonts  # the font files the kit digest holds (a ".ttf" elsewhere is a file like any)
        self.data_dir = os.path.realpath(data_dir)
        self.keyed = frozenset(os.path.realpath(Path(data_dir) / f) for f in keyed)
        self.found, self.written = [], set()

    def stop(self) -> list:
        self.roots = None
        return self.found

    def hook(self, event: str, args: tuple) -> None:
        if self.roots is None or self._busy or (event not in _WATCHED and event not in _REFUSED_EVENTS):
            return
        self._busy = True  # (realpath below raises no audit event it would see; kept safe anyway)
        try:
            if event == "open":
                self._open(*args[:3])
            elif event in ("os.listdir", "os.scandir"):  # which files a folder holds is read too
                self._read(os.path.realpath(os.fsdecode(args[0] if args[0] is not None else ".")))
            else:
                self.found.append(f"{_REFUSED_EVENTS[event]} {args[0]!r}")
        except Exception as exc:  # a hook that raises would break the call it watches
            self.found.append(f"(an open it could not read: {exc!r})")
        finally:
            self._busy = False

    def _open(self, path, mode, flags) -> None:
        if isinstance(path, int) or path is None:
            return  # a file already open
        path = os.path.realpath(os.fsdecode(path))
        if isinstance(mode, str):  # open(): "w" and "x" start the file afresh; "r", "a" and "+" keep what it holds
            fresh, reads = any(c in mode for c in "wx"), "r" in mode or "+" in mode
        else:  # os.open()'s flags: O_TRUNC or O_CREAT | O_EXCL start afresh; O_RDONLY (0) and O_RDWR read
            flags = flags if isinstance(flags, int) else 0
            fresh = bool(flags & os.O_TRUNC) or (flags & (os.O_CREAT | os.O_EXCL)) == os.O_CREAT | os.O_EXCL
            reads = not flags & os.O_WRONLY
        if fresh:
            self.written.add(path)
        elif reads:  # (a+, r+, memmap's r+: reads what the file held: pass forty-one)
            self._read(path)

    def _read(self, path: str) -> None:
        """Record ``path`` (a real path) unless the render may read it."""
        if path in self.written or path in self.keyed:
            return
        if path == self.data_dir or path.startswith(self.data_dir + os.sep):
            self.found.append(f"reads {path}")  # (a font's ending there too: pass forty-one)
            return
        if path in self.fonts or _METADATA.search(path):  # the keyed fonts; what is installed (torch reads
            return                                         # the entry points of every distribution)
        if not any(path == r or path.startswith(r + os.sep) for r in self.roots):
            self.found.append(f"reads {path}")


_READS = _Reads()


def _memoized(data_fn):
    """``data_fn`` computing each parameter set once per worker, returning a fresh deep copy
    each time (so a script that edits what another script's data() returned cannot change
    what a third one gets)."""
    import copy
    import functools

    memo = {}  # parameters -> (data, the files its computation ran, when traced)

    @functools.wraps(data_fn)
    def data(**kwargs):
        key = repr(sorted(kwargs.items()))
        if key not in memo:
            outer = _TRACE.files
            if outer is not None:
                _TRACE.files, since = set(), _TRACE.hits()
            try:
                memo[key] = (data_fn(**kwargs), None if outer is None else _TRACE.files | _TRACE.hit_files(since))
            finally:
                if outer is not None:
                    _TRACE.files = outer | _TRACE.files
        value, files = memo[key]
        if _TRACE.files is not None and files:
            _TRACE.files |= files
        return copy.deepcopy(value)

    return data


def _load(script: contract.Script, scripts: dict):
    """Import ``script`` from its file (and first the figure scripts it imports), with a
    memoized ``data()``: a table that reuses another figure's numbers costs nothing extra
    when both render in this worker."""
    import importlib.util

    if script.module_name in sys.modules:
        return sys.modules[script.module_name]
    for dep in script.imports:
        if dep in scripts:
            _load(scripts[dep], scripts)
    spec = importlib.util.spec_from_file_location(script.module_name, script.path, loader=_FreshSource(
        script.module_name, str(script.path)))
    module = importlib.util.module_from_spec(spec)
    sys.modules[script.module_name] = module
    spec.loader.exec_module(module)
    if callable(getattr(module, "data", None)):
        module.data = _memoized(module.data)
    return module


class _FreshSource(importlib.machinery.SourceFileLoader):
    """Runs a module from its source as it is now, never from ``__pycache__``: Python trusts a
    cached bytecode file while the source keeps its size and its modification time in whole
    seconds, so two saves within a second that keep the size (0.5 -> 0.6) would render the
    first save's code, and cache the result under the second's key. (A worker compiles its
    figure scripts and mhalib afresh: tens of milliseconds.)"""

    def get_code(self, fullname):
        path = self.get_filename(fullname)
        return compile(self.get_data(path), path, "exec", dont_inherit=True)


#: The packages a worker loads from their source (:class:`_FreshLibrary`): the library, and the
#: figures package with its kit (the figure scripts load from their files, with _FreshSource).
FRESH_PACKAGES = (contract.LIB, "figures")


def _fresh(fullname: str) -> bool:
    return any(fullname == p or fullname.startswith(p + ".") for p in FRESH_PACKAGES)


class _FreshLibrary(importlib.abc.MetaPathFinder):
    """In a worker: ``mhalib``, ``figures`` and their modules (the kit among them) load with
    :class:`_FreshSource`."""

    def find_spec(self, fullname, path, target=None):
        if not _fresh(fullname):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is not None and isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            spec.loader = _FreshSource(spec.loader.name, spec.loader.path)
        return spec


#: In a worker: the queue that tells the build which render starts and ends (see render()).
_PROGRESS = None


class _RenderTimeout(BaseException):
    """Raised in a worker by the render's alarm (a BaseException, so that a script's own
    ``except Exception`` does not swallow it)."""


def _on_alarm(signum, frame):
    raise _RenderTimeout()


#: What every render imports from outside this project, loaded once by the fork server (about
#: two seconds of a core per pool otherwise). Nothing of the project itself: ``figures``,
#: ``mhalib`` and the hooks are imported by each worker, fresh.
PRELOAD = ("numpy", "matplotlib", "matplotlib.pyplot", "matplotlib.backends.backend_agg",
           "matplotlib.backends.backend_svg", "matplotlib.backends.backend_pdf", "PIL.Image",
           "fontTools.ttLib", "fontTools.subset")


def _context():
    """The start method of the render workers: ``forkserver`` with :data:`PRELOAD` where the
    platform has it (Linux, macOS), else ``spawn``.

    The server is started once per process (a ``mkdocs serve`` keeps it from one rebuild to the
    next) with one BLAS thread (two workers on two cores: more would only fight; a library reads
    the setting when it loads, in the server); it ends when this process ends. A worker forked
    from it takes this process's environment, working folder and ``sys.path`` of the moment
    (:func:`_worker_init`), as a spawned one does."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    from multiprocessing import forkserver

    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(list(PRELOAD))
    # PYTHONHASHSEED: every worker hashes a text as the others do, in every build (a script that
    # iterates over a set of words draws them in one order: pass thirty-nine)
    saved = {var: os.environ.get(var) for var in _BLAS_VARS + ("PYTHONHASHSEED",)}
    os.environ.update({var: "1" for var in _BLAS_VARS}, PYTHONHASHSEED="0")
    try:
        forkserver.ensure_running()
    finally:
        for var, value in saved.items():
            if value is None:
                os.environ.pop(var, None)
            else:
                os.environ[var] = value
    return ctx


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _die_with(build_pid: int) -> None:
    """End this worker when the process that started the render (``build_pid``) ends, however it
    ends. A spawned worker's parent is that process; a forked one's is the fork server, which
    ends when that process does. Linux's ``PR_SET_PDEATHSIG`` (SIGKILL when the parent dies)
    where available, and everywhere a daemon thread that checks twice a second that the parent
    is the same and ``build_pid`` is still running."""
    import threading

    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    parent = os.getppid()
    if parent == 1 or not _alive(build_pid):  # the build (or the server) died before the lines above
        os._exit(1)

    def watch():
        while True:
            time.sleep(0.5)
            if os.getppid() != parent or not _alive(build_pid):
                os._exit(1)

    threading.Thread(target=watch, name="exit-with-the-build", daemon=True).start()


def _worker_init(parent_pid: int | None = None, progress=None, env: dict | None = None, cwd: str | None = None,
                 path: list | None = None) -> None:
    if parent_pid is not None:
        _die_with(parent_pid)
    if env is not None:  # the starting process's, now (a forked worker has the server's, from its start)
        os.environ.clear()
        os.environ.update(env)
    if cwd is not None:
        os.chdir(cwd)
    if path is not None:
        sys.path[:] = path
    sys.meta_path.insert(0, _FreshLibrary())
    # This module and the kit it imports were loaded to run this function, by Python's own
    # loader, which trusts a __pycache__ file while its source keeps its size and modification
    # second: a kit edited twice within a second (style.percent's ".1%" back to ".0%") rendered
    # the first edit's numbers, cached under the second's key. Forget them; the rest of the
    # setup, and every render, runs in the kit loaded again from its source.
    for name in [n for n in sys.modules if _fresh(n)]:
        del sys.modules[name]
    importlib.import_module(__name__)._worker_setup(progress)


def _worker_setup(progress) -> None:
    """In a worker, in the kit loaded from its source: the progress queue, the render alarm,
    one BLAS thread, matplotlib's file-only backend."""
    global _PROGRESS
    _PROGRESS = progress
    signal.signal(signal.SIGALRM, _on_alarm)
    for var in _BLAS_VARS:  # two workers on two cores: BLAS threads would only fight
        os.environ[var] = "1"
    import matplotlib

    matplotlib.use("Agg")
    sys.addaudithook(_READS.hook)  # for good: a hook cannot be removed; it watches only while on


def _render_group(jobs: list) -> list:
    """In a worker: render requests whose scripts import one another, dependencies first, so
    shared numbers are computed once; returns each one's seconds, or raises."""
    return [_render_job(job) for job in jobs]


def _render_job(job: dict) -> dict:
    """In a worker: render one request into its cache entry; returns timing, or raises.

    The render is stopped by an alarm after ``job["timeout"]`` seconds (a FigureError naming
    the script, with where it was); the build tells the start and end of each render through
    the progress queue, so that it can kill a worker that does not answer the alarm."""
    t0 = time.perf_counter()
    scripts_dir, cache_dir = Path(job["scripts_dir"]), Path(job["cache_dir"])
    scripts = contract.discover(scripts_dir)
    script = scripts[job["name"]]
    request = script.request(dict(job["params"]))
    kind = job.get("kind", script.kind)
    if _PROGRESS is not None:
        _PROGRESS.put((os.getpid(), job["name"], str(script.path), time.monotonic(), None))
    try:
        tmp = store.new_folder(cache_dir)
        try:
            signal.setitimer(signal.ITIMER_REAL, job["timeout"])
            _READS.start(_keyed_roots(scripts_dir, Path(job["lib_dir"]), tmp), contract.DATA_DIR,
                         contract.data_files_read(script, scripts), contract.font_paths())
            seen: set = set()
            try:
                module = _load(script, scripts)
                if os.environ.get("MHA_TRACE_LIB") == "1":  # after the imports: what the render runs
                    _TRACE.start()
                # data() and the first drawing with its layout are traced; its saves and the other
                # themes and layouts draw the same figure untraced (the profiler makes what it
                # watches about 2.4 times slower: the tests' shared build, issue 28)
                formats = _write_outputs(module, script, request, tmp, kind, laid=lambda: seen.update(_TRACE.stop()))
            finally:
                seen = seen | _TRACE.stop()
                unkeyed = _READS.stop()
                signal.setitimer(signal.ITIMER_REAL, 0)
            if unkeyed:
                more = f" and {len(unkeyed) - 5} more" if len(unkeyed) > 5 else ""
                raise FigureError(f"figure {script.name!r} ({script.path}) reached what its cache key does not "
                                  f"cover: {'; '.join(unkeyed[:5])}{more}. A figure reads stored files with "
                                  "data_file(\"NAME.json\") from figures/data, and runs no program and opens no "
                                  "connection; otherwise an edit there would leave its older numbers served. "
                                  "Nothing was cached", script.name, request.params)
            # The sources may have changed while this worker ran: cache nothing that the key
            # does not describe. And the key describes the mhalib found where this worker imported it.
            lib_dir = Path(job["lib_dir"])
            imported = sys.modules.get(contract.LIB)
            if imported is not None and Path(imported.__file__).resolve().parent != lib_dir:
                raise FigureError(f"figure {script.name!r}: the worker imported mhalib from "
                                  f"{Path(imported.__file__).parent}, the key hashes {lib_dir}; nothing was cached",
                                  script.name, request.params)
            now = _kind_key(contract.cache_key(script, request, contract.kit_digest(), contract.discover(scripts_dir),
                                               library=contract.Library(lib_dir)), kind)
            if now != job["key"]:
                raise FigureError(f"figure {script.name!r}: its sources changed while it was rendered; "
                                  "nothing was cached (the next build renders it from the new sources)",
                                  script.name, request.params)
            meta = _meta(request, kind, job["key"])
            store.seal(tmp, meta)
            try:
                store.publish(tmp, Path(job["entry"]), meta)
            except OSError as exc:
                raise FigureError(f"could not move the render of {request.name!r} into the cache: {exc}",
                                  script.name, request.params) from None
        except FigureError:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        except _RenderTimeout:
            shutil.rmtree(tmp, ignore_errors=True)
            raise FigureError(f"figure {script.name!r} ({script.path}) did not finish within {job['timeout']:g} s "
                              f"(MHA_RENDER_TIMEOUT) and was stopped; it was here:\n{traceback.format_exc()}",
                              script.name, request.params) from None
        except Exception:
            shutil.rmtree(tmp, ignore_errors=True)
            raise FigureError(f"figure {script.name!r} ({script.path}) failed:\n{traceback.format_exc()}",
                              script.name, request.params) from None
    except BaseException:  # the end of a render that failed (the build reads no entry for it)
        if _PROGRESS is not None:
            _PROGRESS.put((os.getpid(), None, None, time.monotonic(), None))
        raise
    lib_dir = Path(job["lib_dir"])
    lib_run = sorted({str(p.relative_to(lib_dir.parent)) for p in map(Path, seen) if p.is_relative_to(lib_dir)})
    finished = dict(stem=request.stem, name=script.name, seconds=time.perf_counter() - t0, formats=formats,
                    pid=os.getpid(), end=time.time(), lib_run=lib_run)
    if _PROGRESS is not None:  # this render's entry is in place: the build may read it now
        _PROGRESS.put((os.getpid(), None, None, time.monotonic(), finished))
    return finished


def _keyed_roots(scripts_dir: Path, lib_dir: Path, out: Path) -> list:
    """The folders a render may read anything in (:class:`_Reads`): the Python installation
    (standard library, site-packages: the libraries and the packaged model), mhalib, the figure
    scripts and their kit, its own entry being written and matplotlib's font list (not the rest
    of the cache: another figure's entry is not in this one's key), and the system's /proc,
    /sys and /dev."""
    import matplotlib

    return [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, str(lib_dir), str(scripts_dir),
            str(Path(contract.__file__).resolve().parent.parent), str(out),
            matplotlib.get_cachedir(), "/proc", "/sys", "/dev"]


def _groups(todo: list, scripts: dict) -> list:
    """Split ``todo`` into groups of requests whose scripts are linked by imports (in
    dependency order), largest first, so that each group runs in one worker."""
    parent = {s.name: s.name for s, *_ in todo}

    def root(n):
        while parent[n] != n:
            n = parent[n]
        return n

    def closure(name, seen):
        for dep in scripts[name].imports:
            if dep in scripts and dep not in seen:
                seen.add(dep)
                closure(dep, seen)
        return seen

    for s, *_ in todo:
        for dep in closure(s.name, set()):
            if dep in parent:
                parent[root(dep)] = root(s.name)
    groups: dict = {}
    for item in todo:
        groups.setdefault(root(item[0].name), []).append(item)
    depth = {}

    def level(name):
        if name not in depth:
            depth[name] = 1 + max((level(d) for d in scripts[name].imports if d in scripts), default=0)
        return depth[name]

    out = [sorted(g, key=lambda item: (level(item[0].name), item[0].name)) for g in groups.values()]
    return sorted(out, key=lambda g: (-len(g), g[0][0].name))


# ---- many requests -----------------------------------------------------------------------------

def default_workers() -> int:
    """``$MHA_WORKERS`` if set, else the number of cores (at most 4)."""
    env = os.environ.get("MHA_WORKERS")
    if env:
        if not env.isdigit() or int(env) < 1:
            raise ValueError(f"MHA_WORKERS must be a whole number >= 1, got {env!r}")
        return int(env)
    return max(1, min(4, os.cpu_count() or 1))


def default_timeout() -> float:
    """``$MHA_RENDER_TIMEOUT`` (seconds, a number > 0) if set, else :data:`DEFAULT_RENDER_TIMEOUT_S`."""
    env = os.environ.get("MHA_RENDER_TIMEOUT")
    if env is None or not env.strip():
        return DEFAULT_RENDER_TIMEOUT_S
    try:
        value = float(env)
    except ValueError:
        value = float("nan")
    if not (value > 0 and value != float("inf")):
        raise ValueError(f"MHA_RENDER_TIMEOUT must be a number of seconds > 0, got {env!r}")
    return value


def _check_timeout(timeout) -> float:
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(f"timeout must be a number of seconds, got {timeout!r}")
    if not (timeout > 0 and timeout != float("inf")):
        raise ValueError(f"timeout must be a number of seconds > 0, got {timeout!r}")
    return float(timeout)


def _stop(pool: ProcessPoolExecutor) -> None:
    """Kill the pool's workers now (a failed or interrupted build leaves none running)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        try:
            process.kill()
        except (OSError, ValueError):
            pass
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        try:
            process.join(10)
        except (OSError, ValueError, AssertionError):
            pass


def _kind_key(key: str, kind: str) -> str:
    """The entry key of a request of ``kind``: a ``data`` render (its numbers alone) is an entry
    of its own, never taken for the full render of the same request, nor the other way round."""
    return key if kind != "data" else hashlib.sha256(f"{key}\0data".encode()).hexdigest()[:20]


def render(requests, scripts_dir: Path, cache_dir: Path, *, log=None, workers: int | None = None,
           scripts: dict | None = None, timeout: float | None = None,
           data_only=()) -> tuple[list[Result], Stats]:
    """Results for every request (from verified cache entries, or rendered), and the stats:
    :func:`start`, then :meth:`Rendering.finish`."""
    return start(requests, scripts_dir, cache_dir, log=log, workers=workers, scripts=scripts,
                 timeout=timeout, data_only=data_only).finish()


def start(requests, scripts_dir: Path, cache_dir: Path, *, log=None, workers: int | None = None,
          scripts: dict | None = None, timeout: float | None = None, data_only=(),
          order=()) -> "Rendering":
    """Start rendering ``requests`` in the background; :meth:`Rendering.result` gives one
    request's result as soon as it is ready, :meth:`Rendering.finish` all of them.

    A request in ``data_only`` (one that only a page's ``{{ value }}`` reads, never shown) is
    rendered as kind ``data``: ``data()`` and its JSON, no drawing. ``order`` lists requests in
    the order they will be asked for (a site: its pages in build order); their renders start
    in that order, so the first pages can be written while later figures render.

    Every failure raises :class:`FigureError` naming the script, with its traceback, from
    whichever call is waiting (or from :meth:`Rendering.finish`): a script that fails, or runs
    longer than ``timeout`` seconds (default :func:`default_timeout`). The workers are killed
    whenever a render fails or a wait is interrupted, and exit by themselves if this process dies.
    """
    return Rendering(requests, Path(scripts_dir), Path(cache_dir), log=log, workers=workers, scripts=scripts,
                     timeout=default_timeout() if timeout is None else _check_timeout(timeout),
                     data_only=set(data_only), order=order)


class Rendering:
    """Renders in progress (see :func:`start`). Not thread-safe: one caller waits at a time."""

    def __init__(self, requests, scripts_dir: Path, cache_dir: Path, *, log, workers, scripts, timeout,
                 data_only, order):
        self._t0, self._t_wall = time.perf_counter(), time.time()
        self._log, self._timeout, self._cache_dir = log, timeout, cache_dir
        cache_dir.mkdir(parents=True, exist_ok=True)
        scripts = contract.discover(scripts_dir) if scripts is None else scripts
        shared = contract.kit_digest()
        library = contract.Library()
        self.stats = Stats()
        self._results: dict[contract.Request, Result] = {}
        self._used: set[str] = set()  # entry folder names read from the cache
        self._error: BaseException | None = None
        self._finished: tuple | None = None
        self._pool = self._progress = None
        self._pending: set = set()
        self._group_of: dict = {}
        self._running: dict = {}  # worker pid -> (name, path, since)
        self._kind_of: dict = {}
        self._canonical: dict = {}  # a request as asked -> the script's canonical request
        todo = []
        for asked in sorted(set(requests), key=lambda r: (r.name, r.stem)):
            script = contract.find(asked.name, scripts)
            request = script.request(asked.kwargs) if asked.script is None else asked
            self._canonical[asked] = self._canonical[request] = request
            kind = self._kind_of[request] = "data" if asked in data_only or request in data_only else script.kind
            key = _kind_key(contract.cache_key(script, request, shared, scripts, library=library), kind)
            entry = cache_dir / f"{request.stem}-{key}"
            if entry.exists() or entry.is_symlink():
                try:
                    self._results[request] = read_entry(entry, request, kind, key)
                    self.stats.cached += 1
                    self._used.add(entry.name)
                    store.touch(entry)
                    continue
                except ValueError as exc:
                    if log:
                        log(f"figures: cache entry {entry.name} is damaged ({exc}); discarded, rendering it again")
                    store.discard(entry)
                    self.stats.repaired += 1
            todo.append((script, request, key, entry))
        self._todo_entries = {e.name for *_, e in todo}
        self._todo_by_stem = {item[1].stem: item for item in todo}
        if not todo:
            return
        first_asked: dict = {}
        for i, asked in enumerate(order):
            first_asked.setdefault(self._canonical.get(asked, asked), i)
        groups = _groups(todo, scripts)
        # the group wanted first starts first (a stable sort keeps _groups' order among the rest)
        groups.sort(key=lambda g: min(first_asked.get(item[1], len(first_asked)) for item in g))
        self.stats.workers = min(len(groups), workers or default_workers())
        job_of = {id(item): dict(scripts_dir=str(scripts_dir), cache_dir=str(cache_dir), name=item[0].name,
                                 params=list(item[1].params), key=item[2], entry=str(item[3]),
                                 lib_dir=str(library.root), timeout=timeout, kind=self._kind_of[item[1]])
                  for item in todo}
        ctx = _context()
        self._progress = ctx.SimpleQueue()
        self._pool = ProcessPoolExecutor(self.stats.workers, mp_context=ctx, initializer=_worker_init,
                                         initargs=(os.getpid(), self._progress, dict(os.environ), os.getcwd(),
                                                   list(sys.path)))
        try:
            for g in groups:
                self._group_of[self._pool.submit(_render_group, [job_of[id(item)] for item in g])] = g
        except BaseException:
            self.stop()
            raise
        self._pending = set(self._group_of)

    # -- waiting ---------------------------------------------------------------------------------

    def _poll(self, timeout: float) -> None:
        """Wait up to ``timeout`` seconds for a group to finish; take in what finished; check
        that no render runs past its time. Any failure stops the workers and is raised (now and
        by every later call)."""
        if self._error is not None:
            raise self._error
        try:
            done, self._pending = wait(self._pending, timeout=timeout, return_when=FIRST_COMPLETED)
            for future in done:
                for finished in future.result():
                    self._take(finished)
            while not self._progress.empty():
                pid, name, path, since, finished = self._progress.get()
                self._running[pid] = (name, path, since)
                if finished is not None:  # one render of a group is done: its page need not wait for the rest
                    self._take(finished)
            limit = self._timeout + _GRACE_S + 0.1 * self._timeout
            for name, path, since in self._running.values():
                if name is not None and time.monotonic() - since > limit:
                    raise FigureError(f"figure {name!r} ({path}) did not finish within {self._timeout:g} s "
                                      "(MHA_RENDER_TIMEOUT) and did not stop when told to; its workers were "
                                      "killed", name, ())
        except BaseException as exc:
            self.stop()
            if isinstance(exc, (FigureError, ValueError)):
                self._error = exc
            raise

    def _take(self, finished: dict) -> None:
        """Read the entry a worker reports finished (once; a group's result repeats it)."""
        script, request, key, entry = self._todo_by_stem[finished["stem"]]
        if request in self._results:
            return
        self.stats.render_seconds[request.stem] = round(finished["seconds"], 3)
        self.stats.format_seconds[request.stem] = {k: round(v, 4) for k, v in finished["formats"].items()}
        end = finished["end"] - self._t_wall
        self.stats.timeline[request.stem] = [finished["pid"], round(end - finished["seconds"], 3), round(end, 3)]
        if os.environ.get("MHA_TRACE_LIB") == "1":
            self.stats.lib_run[finished["name"]] = sorted(set(self.stats.lib_run.get(finished["name"], []))
                                                          | set(finished["lib_run"]))
        self._results[request] = read_entry(entry, request, self._kind_of[request], key)
        self.stats.rendered += 1

    def result(self, request) -> Result:
        """The result of ``request`` (one of those given to :func:`start`), waiting for it if needed."""
        canonical = self._canonical.get(request)
        if canonical is None:
            raise FigureError(f"figure {request.name!r} with {dict(request.params) or 'its defaults'} was not among "
                              "the requests this rendering was started with", request.name, request.params)
        while canonical not in self._results:
            if not self._pending:
                self._poll(0)  # raises the failure that left it without a result
                raise FigureError(f"figure {canonical.name!r} has no result", canonical.name, canonical.params)
            self._poll(0.5)
        return self._results[canonical]

    def finish(self) -> tuple[list[Result], Stats]:
        """Every result (in name order) and the stats, once all renders are done; prunes the cache."""
        if self._finished is not None:
            return self._finished
        while self._pending:
            self._poll(0.5)
        if self._error is not None:
            raise self._error
        if self._pool is not None:
            # Every render is in: the workers are told to exit and do so while the build writes
            # its pages (waiting for them here took 0.75 s at the end of every clean build). They
            # are idle, and end with this process in any case (_die_with).
            self._pool.shutdown(wait=False)
            self._progress.close()
            self._pool = None
        results = self._results
        self.stats.total = len(results)
        # the last KEEP_PER_STEM entries of each figure: reverting an edit finds the earlier render
        store.prune(self._cache_dir, used=self._todo_entries | self._used, group=lambda name: name.rsplit("-", 1)[0],
                    keep_per_group=KEEP_PER_STEM, unused_for_s=PRUNE_AFTER_S)
        self.stats.seconds = time.perf_counter() - self._t0
        if self._log:
            self._log(self.stats.line())
        self._finished = ([results[r] for r in sorted(results, key=lambda r: (r.name, r.stem))], self.stats)
        return self._finished

    def stop(self) -> None:
        """Kill the workers now (a build that failed elsewhere leaves none running)."""
        if self._pool is not None:
            _stop(self._pool)
            self._progress.close()
            self._pool = None
        self._pending = set()
