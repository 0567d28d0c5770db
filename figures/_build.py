"""Render figures and tables for the site, cached by content hash, written atomically.

A request is a script name plus parameters. Its cache key hashes everything the output
depends on: the script, the shared figure modules, every ``mhalib`` source file, the
parameters, and the matplotlib/numpy versions. Outputs go to a temporary directory that
is renamed into place only when complete, so a build killed mid-way leaves nothing
half-written that a later build could pick up.

Nothing here knows MkDocs; the site hook calls :func:`render` and adds the files.
"""
from __future__ import annotations

import hashlib
import importlib.util
from importlib import metadata
import json
import os
import re
import shutil
import sys
import tempfile
import time
import traceback
from glob import escape as glob_escape
from dataclasses import dataclass, field
from pathlib import Path

FIGURES_PKG = Path(__file__).resolve().parent
CACHE_VERSION = "1"


class FigureError(RuntimeError):
    """A figure or table script failed; the message names it and carries the traceback."""


@dataclass(frozen=True)
class Request:
    name: str
    params: tuple = ()  # sorted (key, value) pairs

    @property
    def stem(self) -> str:
        if not self.params:
            return self.name
        parts = "_".join(f"{k}-{v}" for k, v in self.params)
        return f"{self.name}--{re.sub(r'[^A-Za-z0-9_.-]+', '-', parts)}"

    @property
    def kwargs(self) -> dict:
        return dict(self.params)


@dataclass
class Result:
    request: Request
    kind: str  # "figure" or "table"
    files: dict  # site-relative name -> absolute path in the cache
    data: dict = field(default_factory=dict)


def parse_params(query: str) -> tuple:
    """``"d_model=4&n=8"`` -> ``(("d_model", 4), ("n", 8))`` with ints/floats/bools parsed."""
    out = []
    for part in filter(None, (query or "").split("&")):
        if "=" not in part:
            raise ValueError(f"figure parameter {part!r} must look like name=value")
        k, v = part.split("=", 1)
        out.append((k.strip(), _parse_value(v.strip())))
    return tuple(sorted(out))


def _parse_value(v: str):
    if v in ("true", "false"):
        return v == "true"
    for cast in (int, float):
        try:
            return cast(v)
        except ValueError:
            pass
    return v


def _source_digest(paths) -> str:
    h = hashlib.sha256()
    for p in sorted(paths):
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()


def shared_digest() -> str:
    """Hash of what every figure depends on: mhalib, the shared figure modules, library versions.

    Found without importing matplotlib or mhalib, so that a build with nothing to render
    costs almost nothing.
    """
    lib = Path(importlib.util.find_spec("mhalib").origin).resolve().parent
    shared = [p for p in FIGURES_PKG.glob("_*.py")] + [FIGURES_PKG / "__init__.py"]
    h = hashlib.sha256()
    for part in (CACHE_VERSION, metadata.version("matplotlib"), metadata.version("numpy"),
                 _source_digest(lib.glob("*.py")), _source_digest(shared)):
        h.update(part.encode())
    return h.hexdigest()


DATA_FILE_RE = re.compile(rb"data/([\w.-]+\.(?:json|csv))")


def cache_key(script: Path, request: Request, shared: str) -> str:
    """Hash of the shared digest, the script, the data files it names and the parameters."""
    h = hashlib.sha256()
    h.update(shared.encode())
    source = script.read_bytes()
    h.update(source)
    for name in sorted(set(DATA_FILE_RE.findall(source))):
        data_file = script.parent / "data" / name.decode()
        h.update(data_file.read_bytes() if data_file.is_file() else b"missing")
    h.update(json.dumps(request.params, sort_keys=True).encode())
    return h.hexdigest()[:20]


def load_script(path: Path):
    """Import a figure script from its file (so a project may keep its own figures/ folder)."""
    mod_name = f"figures.{path.stem}" if path.parent == FIGURES_PKG else f"_site_figure_{path.stem}"
    if mod_name in sys.modules and getattr(sys.modules[mod_name], "__file__", None) == str(path):
        return sys.modules[mod_name]
    spec = importlib.util.spec_from_file_location(mod_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    spec.loader.exec_module(module)
    return module


def _render_into(module, request: Request, out: Path) -> str:
    from . import _export

    data = module.data(**request.kwargs)
    (out / "data.json").write_text(_export.to_json(data), encoding="utf-8")
    (out / f"{request.stem}.csv").write_text(_export.to_csv(data), encoding="utf-8")
    if hasattr(module, "table"):
        _export.write(module, data, out / f"{request.stem}.md")
        return "table"
    salt = f"{request.stem}"
    _export.write(module, data, out / f"{request.stem}.svg", theme="light", salt=salt)
    _export.write(module, data, out / f"{request.stem}-dark.svg", theme="dark", salt=salt + "-dark")
    _export.write(module, data, out / f"{request.stem}.png", theme="light", salt=salt)
    return "figure"


def render(requests, scripts_dir: Path, cache_dir: Path, *, log=None) -> tuple[list[Result], dict]:
    """Render every request (using the cache where it can); returns results and stats.

    Raises :class:`FigureError` naming the first script that fails, with its traceback.
    """
    t0 = time.perf_counter()
    scripts_dir, cache_dir = Path(scripts_dir), Path(cache_dir)
    cache_dir.mkdir(parents=True, exist_ok=True)
    shared = shared_digest()
    results, rendered, cached = [], 0, 0
    for request in sorted(set(requests), key=lambda r: (r.name, r.params)):
        script = scripts_dir / f"{request.name}.py"
        if not script.is_file():
            known = ", ".join(p.stem for p in sorted(scripts_dir.glob("[!_]*.py")))
            raise FigureError(f"figure {request.name!r} is referenced but {script} does not exist; known: {known}")
        final = cache_dir / f"{request.stem}-{cache_key(script, request, shared)}"
        if final.is_dir():
            cached += 1
        else:
            tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=cache_dir))
            try:
                module = load_script(script)
                kind = _render_into(module, request, tmp)
                (tmp / "kind").write_text(kind, encoding="utf-8")
                os.replace(tmp, final)  # atomic: the entry appears complete or not at all
            except Exception as exc:
                shutil.rmtree(tmp, ignore_errors=True)
                raise FigureError(
                    f"figure {request.name!r} ({script}) failed:\n{traceback.format_exc()}"
                ) from exc
            rendered += 1
        kind = (final / "kind").read_text(encoding="utf-8")
        files = {f.name: f for f in final.iterdir() if f.name not in ("kind", "data.json")}
        data = json.loads((final / "data.json").read_text(encoding="utf-8"))
        results.append(Result(request, kind, files, data))
    _clean_stale(cache_dir, used={r.request.stem: r.files for r in results})
    stats = dict(total=len(results), cached=cached, rendered=rendered, seconds=time.perf_counter() - t0)
    if log:
        log(f"figures: {stats['total']} figures/tables, {cached} cached, {rendered} rendered, "
            f"{stats['seconds']:.1f} s")
    return results, stats


def _clean_stale(cache_dir: Path, used: dict) -> None:
    """Remove older renders of the figures just used, and temporary directories a killed
    build left behind (older than a minute, so a concurrent build is not disturbed)."""
    now = time.time()
    for tmp in cache_dir.glob(".tmp-*"):
        if now - tmp.stat().st_mtime > 60:
            shutil.rmtree(tmp, ignore_errors=True)
    keep = {next(iter(files.values())).parent for files in used.values() if files}
    for stem in used:
        for entry in cache_dir.glob(f"{glob_escape(stem)}-*"):
            if re.fullmatch(re.escape(stem) + r"-[0-9a-f]{20}", entry.name) and entry not in keep:
                shutil.rmtree(entry, ignore_errors=True)
