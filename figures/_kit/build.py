"""Render figures and tables for the site: fresh code, verified cache, both cores.

:func:`render` takes requests (a script and its canonical parameters, see
:mod:`figures._kit.contract`) and returns every output's bytes. Each result is cached in
``<cache>/<stem>-<key>/``, where the key hashes everything the output depends on (the
script and the figure scripts it imports, the data files they name, all of ``mhalib``,
this machinery, the library versions and the parameters).

What keeps a wrong figure from being published:

* **Fresh code.** Missing entries are rendered in new worker processes (``spawn``), one pool
  per call, so a render never runs code imported before an edit (``mkdocs serve`` keeps
  its process). After rendering, a worker hashes the sources again; if they changed
  while it worked, the result is thrown away, never cached under a key it does not match.
* **Verified entries.** Each entry has a ``manifest.json`` with every file's size and
  SHA-256. An entry is used only if all of its files match; the bytes returned are the
  bytes checked. A damaged or incomplete entry is discarded and rendered again, with a
  log line saying so.
* **Written once, atomically.** An entry is written to a temporary folder and renamed into
  place. If a concurrent build renamed the same entry first, its (verified) copy is used.

Nothing here knows MkDocs; the site hook turns directives into requests and results into
pages and files.
"""
from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import shutil
import sys
import tempfile
import time
import traceback
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import contract

MANIFEST = "manifest.json"
#: Entries not used for this long are pruned by the next build that uses the cache.
PRUNE_AFTER_S = 30 * 24 * 3600
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
    data: dict = field(default_factory=dict)  # data() as JSON values

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

    def line(self) -> str:
        fixed = f", {self.repaired} damaged entries re-rendered" if self.repaired else ""
        return (f"figures: {self.total} figures/tables, {self.cached} cached, {self.rendered} rendered"
                f"{fixed}, {self.workers} workers, {self.seconds:.1f} s")

    def as_dict(self) -> dict:
        return asdict(self)


# ---- one entry ---------------------------------------------------------------------------------

def _sha256(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def read_entry(entry: Path, request: contract.Request, kind: str, key: str) -> Result:
    """The entry's files, checked against its manifest; ``ValueError`` says what is wrong."""
    try:
        manifest = json.loads((entry / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"no readable manifest ({exc.__class__.__name__})") from None
    if manifest.get("key") != key or manifest.get("kind") != kind:
        raise ValueError("manifest belongs to another key or kind")
    expected = set(request.outputs(kind).values())
    listed = manifest.get("files", {})
    if not expected <= set(listed):
        raise ValueError(f"files missing from the manifest: {sorted(expected - set(listed))}")
    files = {}
    for name, meta in sorted(listed.items()):
        try:
            raw = (entry / name).read_bytes()
        except OSError:
            raise ValueError(f"{name} is missing") from None
        if len(raw) != meta["size"] or _sha256(raw) != meta["sha256"]:
            raise ValueError(f"{name} does not match its recorded size and hash")
        files[name] = raw
    data = json.loads(files[request.outputs(kind)["json"]])
    return Result(request, kind, files, data)


def _write_outputs(module, script: contract.Script, request: contract.Request, out: Path) -> None:
    """Compute ``data()`` once and write every output of the request into ``out``."""
    from . import export

    names = request.outputs(script.kind)
    data = module.data(**request.kwargs)
    (out / names["json"]).write_text(export.to_json(data), encoding="utf-8")
    (out / names["csv"]).write_text(export.to_csv(data), encoding="utf-8")
    if script.explorer:
        payload = module.explorer(data)
        (out / names["explorer"]).write_text(json.dumps(payload, separators=(",", ":")), encoding="utf-8")
    if script.kind == "table":
        export.write(module, data, out / names["md"])
        return
    wide = export.to_wide_csv(data)
    if wide is not None:
        (out / request.wide_csv()).write_text(wide, encoding="utf-8")
    # The SVGs and the light PNG get one draw each, as the command line makes them (a figure
    # saved twice is laid out again). The PDF and the dark PNG are extra saves of the light
    # and dark SVG's drawing: two more formats for the price of two saves, not two draws.
    export.write_many(module, data, [out / names["svg"], out / names["pdf"]], theme="light", salt=request.stem)
    export.write_many(module, data, [out / names["svg_dark"], out / names["png_dark"]], theme="dark",
                      salt=request.stem + "-dark")
    export.write(module, data, out / names["png"], theme="light", salt=request.stem)
    if script.narrow:
        for theme, role in (("light", "svg_narrow"), ("dark", "svg_narrow_dark")):
            export.write_many(module, data, [out / names[role]], theme=theme, salt=request.stem + "-" + role,
                              layout="narrow")


def _memoized(data_fn):
    """``data_fn`` computing each parameter set once per worker, returning a fresh deep copy
    each time (so a script that edits what another script's data() returned cannot change
    what a third one gets)."""
    import copy
    import functools

    memo = {}

    @functools.wraps(data_fn)
    def data(**kwargs):
        key = repr(sorted(kwargs.items()))
        if key not in memo:
            memo[key] = data_fn(**kwargs)
        return copy.deepcopy(memo[key])

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
    spec = importlib.util.spec_from_file_location(script.module_name, script.path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[script.module_name] = module
    spec.loader.exec_module(module)
    if callable(getattr(module, "data", None)):
        module.data = _memoized(module.data)
    return module


def _worker_init() -> None:
    for var in _BLAS_VARS:  # two workers on two cores: BLAS threads would only fight
        os.environ[var] = "1"
    import matplotlib

    matplotlib.use("Agg")


def _render_group(jobs: list) -> list:
    """In a worker: render requests whose scripts import one another, dependencies first, so
    shared numbers are computed once; returns each one's seconds, or raises."""
    return [_render_job(job) for job in jobs]


def _render_job(job: dict) -> dict:
    """In a worker: render one request into its cache entry; returns timing, or raises."""
    t0 = time.perf_counter()
    scripts_dir, cache_dir = Path(job["scripts_dir"]), Path(job["cache_dir"])
    scripts = contract.discover(scripts_dir)
    script = scripts[job["name"]]
    request = script.request(dict(job["params"]))
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=cache_dir))
    try:
        module = _load(script, scripts)
        _write_outputs(module, script, request, tmp)
        # The sources may have changed while this worker ran: cache nothing that the key
        # does not describe.
        now = contract.cache_key(script, request, contract.code_digest(), contract.discover(scripts_dir))
        if now != job["key"]:
            raise FigureError(f"figure {script.name!r}: its sources changed while it was rendered; "
                              "nothing was cached (the next build renders it from the new sources)",
                              script.name, request.params)
        files = {f.name: {"size": f.stat().st_size, "sha256": _sha256(f.read_bytes())}
                 for f in sorted(tmp.iterdir())}
        manifest = dict(key=job["key"], name=script.name, kind=script.kind, files=files)
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True), encoding="utf-8")
        _publish(tmp, Path(job["entry"]), request, script.kind, job["key"])
    except FigureError:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    except Exception:
        shutil.rmtree(tmp, ignore_errors=True)
        raise FigureError(f"figure {script.name!r} ({script.path}) failed:\n{traceback.format_exc()}",
                          script.name, request.params) from None
    return dict(stem=request.stem, seconds=time.perf_counter() - t0)


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


def _publish(tmp: Path, entry: Path, request, kind: str, key: str) -> None:
    """Rename ``tmp`` to ``entry``; if another build got there first with a good entry, keep it."""
    for _ in range(3):
        try:
            os.replace(tmp, entry)
            return
        except OSError:
            if not entry.exists():
                continue
            try:
                read_entry(entry, request, kind, key)
                shutil.rmtree(tmp, ignore_errors=True)  # a concurrent build wrote the same entry
                return
            except ValueError:
                shutil.rmtree(entry, ignore_errors=True)  # damaged: replace it with ours
    raise FigureError(f"could not move the render of {request.name!r} into {entry}")


# ---- many requests -----------------------------------------------------------------------------

def default_workers() -> int:
    """``$MHA_WORKERS`` if set, else the number of cores (at most 4)."""
    env = os.environ.get("MHA_WORKERS")
    if env:
        if not env.isdigit() or int(env) < 1:
            raise ValueError(f"MHA_WORKERS must be a whole number >= 1, got {env!r}")
        return int(env)
    return max(1, min(4, os.cpu_count() or 1))


def render(requests, scripts_dir: Path, cache_dir: Path, *, log=None, workers: int | None = None,
           scripts: dict | None = None) -> tuple[list[Result], Stats]:
    """Results for every request (from verified cache entries, or rendered), and the stats.

    Raises :class:`FigureError` naming a script that fails, with its traceback.
    """
    t0 = time.perf_counter()
    scripts_dir, cache_dir = Path(scripts_dir), Path(cache_dir)
    cache_dir.mkdir(parents=True, exist_ok=True)
    scripts = contract.discover(scripts_dir) if scripts is None else scripts
    shared = contract.code_digest()
    stats = Stats()
    results: dict[contract.Request, Result] = {}
    used: set[str] = set()  # entry folder names read from the cache
    todo = []
    for request in sorted(set(requests), key=lambda r: (r.name, r.stem)):
        script = contract.find(request.name, scripts)
        request = script.request(request.kwargs) if request.script is None else request
        key = contract.cache_key(script, request, shared, scripts)
        entry = cache_dir / f"{request.stem}-{key}"
        if entry.exists():
            try:
                results[request] = read_entry(entry, request, script.kind, key)
                stats.cached += 1
                used.add(entry.name)
                _touch(entry)
                continue
            except ValueError as exc:
                if log:
                    log(f"figures: cache entry {entry.name} is damaged ({exc}); discarded, rendering it again")
                shutil.rmtree(entry, ignore_errors=True)
                stats.repaired += 1
        todo.append((script, request, key, entry))
    if todo:
        groups = _groups(todo, scripts)
        stats.workers = min(len(groups), workers or default_workers())
        job_of = {id(item): dict(scripts_dir=str(scripts_dir), cache_dir=str(cache_dir), name=item[0].name,
                                 params=list(item[1].params), key=item[2], entry=str(item[3])) for item in todo}
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(stats.workers, mp_context=ctx, initializer=_worker_init) as pool:
            futures = [pool.submit(_render_group, [job_of[id(item)] for item in g]) for g in groups]
            try:
                for group, future in zip(groups, futures):
                    for (script, request, key, entry), done in zip(group, future.result()):
                        stats.render_seconds[request.stem] = round(done["seconds"], 3)
                        results[request] = read_entry(entry, request, script.kind, key)
                        stats.rendered += 1
            except BaseException:
                for f in futures:
                    f.cancel()
                raise
    stats.total = len(results)
    _prune(cache_dir, stems={r.stem for r in results}, used={e.name for *_, e in todo} | used)
    stats.seconds = time.perf_counter() - t0
    if log:
        log(stats.line())
    return [results[r] for r in sorted(results, key=lambda r: (r.name, r.stem))], stats


def _touch(entry: Path) -> None:
    try:
        os.utime(entry)
    except OSError:
        pass


def _prune(cache_dir: Path, stems: set, used: set) -> None:
    """Remove other renders of the stems just used, entries unused for :data:`PRUNE_AFTER_S`,
    and temporary folders a killed build left (older than a minute, so a concurrent build
    is not disturbed)."""
    now = time.time()
    for path in cache_dir.iterdir():
        try:
            age = now - path.stat().st_mtime
        except OSError:
            continue
        if path.name.startswith(".tmp-"):
            if age > 60:
                shutil.rmtree(path, ignore_errors=True)
            continue
        if path.name in used or not path.is_dir():
            continue
        stem = path.name.rsplit("-", 1)[0]
        if stem in stems or age > PRUNE_AFTER_S:
            shutil.rmtree(path, ignore_errors=True)
