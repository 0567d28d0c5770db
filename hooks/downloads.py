"""The downloads the site serves: a source archive of the project and a wheel of ``mhalib``.

Both are made from the project's files as they are on disk: what git tracks or would track
(``git ls-files``, plus new files that ``.gitignore`` does not exclude; outside a git
checkout, every file but build outputs, caches and virtual environments), so the pages,
the library and the downloads of one build come from the same sources. This module knows nothing of MkDocs; ``hooks/site_downloads.py`` adds the files
to the site.

- ``mha-course-<version>-src.tar.gz``: every file, under ``mha-course-<version>/``, in
  path order, owned by 0:0, mode 644 (755 where git records an executable), dated
  ``SOURCE_DATE_EPOCH``, gzip header dated the same and without a file name.
- ``mhalib-<version>-py3-none-any.whl``: built by setuptools' own PEP 517 backend
  (``build_meta.build_wheel``; no network, so no build isolation) in a scratch copy of
  the top-level files, ``mhalib/`` and ``figures/``, every file mode 644. setuptools
  dates the zip entries by ``SOURCE_DATE_EPOCH`` and writes them in sorted order.

The version is ``[project] version`` in ``pyproject.toml``. Two builds of the same files
with the same ``SOURCE_DATE_EPOCH`` give the same bytes.

Cache: each download is kept in ``<cache>/<kind>-<key>/`` where the key hashes this
module, the name and version, the epoch, the builder's version (setuptools and Python for
the wheel) and every input file's path, mode and bytes. An entry is used only if its
recorded SHA-256 matches the file; anything else is rebuilt, and the log says so.
Entries are written to a temporary folder and renamed into place; entries not used for
30 days are removed.
"""
from __future__ import annotations

import gzip
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

ARCHIVE_STEM = "mha-course"
WHEEL_PACKAGES = ("mhalib", "figures")  # the folders the wheel is built from, besides the top-level files
TORCH_CPU = "torch --index-url https://download.pytorch.org/whl/cpu"  # the CPU build; plain `torch` pulls CUDA
MIN_SETUPTOOLS = (68, 0)  # pyproject.toml's build-system requirement
PRUNE_AFTER_S = 30 * 24 * 3600

# Outside git: what is never part of the project's sources.
SKIP_DIRS = {".git", ".venv", "venv", "node_modules", ".cache", "site", "test-output", "build", "dist",
             "__pycache__", ".pytest_cache", ".jupyter_cache", ".mypy_cache", ".ruff_cache", ".ipynb_checkpoints"}
SKIP_FILES = {".coverage", "coverage.xml", ".DS_Store"}
SKIP_SUFFIXES = (".pyc", ".egg-info")


class DownloadError(RuntimeError):
    """A download could not be built; the message says which and why."""


@dataclass(frozen=True)
class Built:
    kind: str  # "wheel" or "source"
    path: Path
    cached: bool


def human_size(n: int) -> str:
    """``523 B``, ``143 kB``, ``1.2 MB`` (powers of 1000, as pip prints them)."""
    if n < 1000:
        return f"{n} B"
    kb = round(n / 1000)  # 999,600 B is "1.0 MB", not "1000 kB"
    return f"{kb} kB" if kb < 1000 else f"{n / 1_000_000:.1f} MB"


def project_meta(root: Path) -> tuple[str, str]:
    """``(name, version)`` from ``pyproject.toml``'s ``[project]`` table."""
    path = root / "pyproject.toml"
    try:
        project = tomllib.loads(path.read_text(encoding="utf-8"))["project"]
        name, version = project["name"], project["version"]
    except (OSError, KeyError, tomllib.TOMLDecodeError) as exc:
        raise DownloadError(f"cannot read [project] name and version from {path}: {exc!r}") from None
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._+!-]*", str(version)):
        raise DownloadError(f"{path}: version {version!r} cannot name a file")
    return str(name), str(version)


def file_names(root: Path) -> dict[str, str]:
    """``{"wheel": "mhalib-0.1.0-py3-none-any.whl", "source": "mha-course-0.1.0-src.tar.gz"}``."""
    name, version = project_meta(root)
    wheel_name = re.sub(r"[-_.]+", "_", name).lower()  # the wheel spec's escaped distribution name
    return {"wheel": f"{wheel_name}-{version}-py3-none-any.whl", "source": f"{ARCHIVE_STEM}-{version}-src.tar.gz"}


def basename(file) -> str:
    """The file name of an MkDocs ``File`` (its ``name`` drops the extension)."""
    return file.src_uri.rsplit("/", 1)[-1]


def served(files) -> dict:
    """The download files in an MkDocs ``Files`` collection: ``{"wheel": File, "source": File}``."""
    out = {}
    for f in files:
        if f.src_uri.startswith("downloads/"):
            if f.src_uri.endswith(".whl"):
                out["wheel"] = f
            elif f.src_uri.endswith("-src.tar.gz"):
                out["source"] = f
    return out


# ---- which files -------------------------------------------------------------------------------

def project_files(root: Path, *, exclude: tuple[Path, ...] = ()) -> list[tuple[str, int]]:
    """``[(relative path, mode), ...]`` in path order.

    In a git checkout: the tracked files that exist on disk (mode 0o755 where git records an
    executable, else 0o644) and the files not yet added that ``.gitignore`` does not ignore
    (the build uses them too). Outside git: every regular file except build outputs, caches,
    virtual environments and ``exclude``."""
    root = root.resolve()
    def git(*args):
        try:
            out = subprocess.run(["git", "ls-files", "-z", *args], cwd=root, capture_output=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return None
        return [e for e in out.stdout.decode("utf-8", "surrogateescape").split("\0") if e] if out.returncode == 0 else None

    tracked, new = git("--stage"), git("--others", "--exclude-standard")
    if tracked is not None and new is not None:
        found = {}
        for entry in tracked:
            meta, rel = entry.split("\t", 1)
            mode = meta.split()[0]
            if mode in ("100644", "100755") and (root / rel).is_file() and not (root / rel).is_symlink():
                found[rel] = 0o755 if mode == "100755" else 0o644
        for rel in new:  # not committed yet, not ignored: part of what this build is made from
            if (root / rel).is_file() and not (root / rel).is_symlink():
                found[rel] = 0o755 if os.access(root / rel, os.X_OK) else 0o644
        return sorted(found.items())
    skip = {p.resolve() for p in exclude}
    files = []
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.endswith(SKIP_SUFFIXES)
                             and (here / d).resolve() not in skip and not (here / d).is_symlink())
        for name in filenames:
            path = here / name
            if name in SKIP_FILES or name.endswith(SKIP_SUFFIXES) or path.is_symlink() or not path.is_file():
                continue
            mode = 0o755 if os.access(path, os.X_OK) else 0o644
            files.append((path.relative_to(root).as_posix(), mode))
    return sorted(files)


def wheel_inputs(files: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """What setuptools reads to build the wheel: the top-level files (pyproject.toml, README,
    a licence) and the packages' folders."""
    return [(rel, mode) for rel, mode in files if "/" not in rel or rel.split("/", 1)[0] in WHEEL_PACKAGES]


# ---- the two builders ----------------------------------------------------------------------------

def write_source_archive(root: Path, files: list[tuple[str, int]], prefix: str, epoch: int, target: Path) -> None:
    """A tar.gz of ``files`` under ``prefix/``: same files and epoch, same bytes."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for rel, mode in sorted(files):
            data = (root / rel).read_bytes()
            info = tarfile.TarInfo(f"{prefix}/{rel}")
            info.size, info.mtime, info.mode = len(data), epoch, mode
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(data))
    with open(target, "wb") as f, gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=epoch, compresslevel=9) as gz:
        gz.write(raw.getvalue())


def setuptools_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("setuptools")
    except PackageNotFoundError:
        found = None
    numbers = tuple(int(x) for x in re.findall(r"\d+", found or "")[:2])
    if found is None or numbers < MIN_SETUPTOOLS:
        need = ".".join(map(str, MIN_SETUPTOOLS))
        raise DownloadError(f"the site builds the mhalib wheel it serves with setuptools >= {need}, and "
                            f"{sys.executable} has {found or 'none'}: pip install 'setuptools>={need}'")
    return found


def build_wheel(root: Path, files: list[tuple[str, int]], epoch: int, target: Path, expected_name: str) -> None:
    """Build the wheel from a scratch copy of ``files`` (never in the project: setuptools
    writes build/ and *.egg-info next to the sources) and move it to ``target``."""
    scratch = target.parent / "scratch"
    src, dist = scratch / "src", scratch / "dist"
    for rel, _ in files:
        dest = src / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / rel, dest)
        os.chmod(dest, 0o644)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["SOURCE_DATE_EPOCH"] = str(epoch)
    code = "import sys\nfrom setuptools import build_meta\nprint(build_meta.build_wheel(sys.argv[1]))\n"
    try:
        run = subprocess.run([sys.executable, "-c", code, str(dist)], cwd=src, env=env, capture_output=True,
                             text=True, timeout=600)
    except (OSError, subprocess.SubprocessError) as exc:
        raise DownloadError(f"building the wheel failed to run: {exc!r}") from None
    name = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else ""
    if run.returncode != 0 or name != expected_name or not (dist / name).is_file():
        raise DownloadError(f"building the wheel failed (exit {run.returncode}, made {name!r}, "
                            f"expected {expected_name!r}):\n{run.stderr[-3000:]}")
    os.replace(dist / name, target)
    shutil.rmtree(scratch)


# ---- the cache ---------------------------------------------------------------------------------

def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def cache_key(kind: str, root: Path, files: list[tuple[str, int]], *parts: str) -> str:
    h = hashlib.sha256()
    h.update(Path(__file__).read_bytes())  # the code that makes the downloads
    for part in (kind, *parts):
        h.update(part.encode() + b"\0")
    for rel, mode in files:
        h.update(f"{rel}\0{mode:o}\0".encode())
        h.update(hashlib.sha256((root / rel).read_bytes()).digest())
    return h.hexdigest()[:32]


def _cached(entry: Path, name: str, log) -> Path | None:
    """The entry's file if the entry is intact (:func:`figures._kit.store.read`: the one rule of
    every cache here, each file's size and SHA-256 checked), else None (and it is removed)."""
    from figures._kit import store

    if not (entry.exists() or entry.is_symlink()):
        return None
    try:
        store.read(entry, {"file": name}, expected=(name,))
    except store.Damaged as exc:
        log(f"downloads: cache entry {entry.name} is damaged ({exc}); rebuilding it")
        store.discard(entry)
        return None
    store.touch(entry)  # used now: not pruned
    return entry / name


def _store(cache_dir: Path, entry: Path, name: str, make) -> Path:
    from figures._kit import store

    folder = store.new_folder(cache_dir)
    try:
        make(folder / name)
        store.seal(folder, {"file": name})
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    store.publish(folder, entry, {"file": name})
    return entry / name


def _prune(cache_dir: Path, keep: set[Path]) -> None:
    from figures._kit import store

    store.prune(cache_dir, used={p.name for p in keep}, unused_for_s=PRUNE_AFTER_S)


def build_downloads(root: Path, cache_dir: Path, *, epoch: int, log=print,
                    exclude: tuple[Path, ...] = ()) -> dict[str, Built]:
    """Both downloads for the project at ``root``, from the cache when their inputs are unchanged."""
    root = root.resolve()
    names = file_names(root)
    _, version = project_meta(root)
    files = project_files(root, exclude=exclude)
    if not any(rel == "pyproject.toml" for rel, _ in files):
        raise DownloadError(f"pyproject.toml is not among the project's files in {root}")
    cache_dir.mkdir(parents=True, exist_ok=True)
    plans = {
        "source": (files, [str(epoch)],
                   lambda target: write_source_archive(root, files, f"{ARCHIVE_STEM}-{version}", epoch, target)),
    }
    inputs = wheel_inputs(files)
    plans["wheel"] = (inputs, [str(epoch), setuptools_version(), "%d.%d" % sys.version_info[:2]],
                      lambda target: build_wheel(root, inputs, max(epoch, 315532800), target, names["wheel"]))
    out = {}
    for kind in ("source", "wheel"):
        used, parts, make = plans[kind]
        entry = cache_dir / f"{kind}-{cache_key(kind, root, used, names[kind], *parts)}"
        path = _cached(entry, names[kind], log)
        cached = path is not None
        if path is None:
            started = time.perf_counter()
            path = _store(cache_dir, entry, names[kind], make)
            log(f"downloads: built {names[kind]} from {len(used)} files in {time.perf_counter() - started:.1f} s")
        out[kind] = Built(kind, path, cached)
    _prune(cache_dir, {b.path.parent for b in out.values()})
    return out
