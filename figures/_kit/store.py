"""The build's caches, one rule: an entry is a folder whose manifest records each file's size and SHA-256.

Every cache of the site (rendered figures, KaTeX formulas, the downloads, the executed
notebooks) keeps its entries here, and every read goes through :func:`read`:

* **Written once, atomically.** An entry is written to a temporary folder beside it, its
  manifest last (:func:`seal`), and renamed into place (:func:`publish`); a reader never sees
  half an entry. If another build published the same entry first, its (verified) copy stays.
* **Checked on every read.** :func:`read` returns an entry's files only if the manifest
  belongs to what is asked (its ``meta`` equals the caller's, so an entry serves only the
  input it was made for) and every file has the recorded size and hash. Anything else
  (a file edited, truncated or missing, a manifest for other inputs, a plain file where the
  folder should be) raises :class:`Damaged`; the caller discards the entry and makes it again.
* **Verified once per process.** Within one process (``mkdocs serve``), an entry read before
  is trusted without hashing again while its manifest reads the same and no file's size,
  mtime, ctime or inode changed (a write changes the mtime and ctime; ``os.utime`` can
  restore the mtime, not the ctime; a replaced file has a new inode). A file changed within
  the last two seconds is hashed again next time (it could change again within one tick of
  the file system's clock unseen, as git reasons).
* **Pruned by use.** :func:`prune` keeps what the build used, the most recently used
  entries of each group, and removes entries unused for a month and temporary folders a
  killed build left.

Nothing here knows MkDocs or figures: :mod:`figures._kit.build` and the site's hooks use it.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

MANIFEST = "manifest.json"
#: A file changed this recently may still change within one tick of the file system's clock
#: without its signature changing, so it is hashed again next time.
_RACY_NS = 2_000_000_000
#: Entries verified in this process: entry path -> (manifest bytes, {file: signature} or None
#: while a signature is not settled, the files, the value the caller made of them).
_VERIFIED: dict = {}


class Damaged(ValueError):
    """An entry that cannot be used: the message says what is wrong with it."""


def sha256(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def _signature(path: Path) -> tuple:
    st = path.stat()
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)


def new_folder(cache_dir: Path) -> Path:
    """A temporary folder in ``cache_dir`` to write an entry into (then :func:`seal`, :func:`publish`)."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=".tmp-", dir=cache_dir))


def seal(folder: Path, meta: dict) -> None:
    """Write ``folder``'s manifest: ``meta`` (what the entry was made for) and every file in it
    with its size and SHA-256."""
    files = {f.name: {"size": f.stat().st_size, "sha256": sha256(f.read_bytes())}
             for f in sorted(folder.iterdir()) if f.name != MANIFEST}
    (folder / MANIFEST).write_text(json.dumps(dict(meta, files=files), indent=1, sort_keys=True), encoding="utf-8")


def read(entry: Path, meta: dict, *, expected=(), make=None):
    """The files of ``entry`` (``{name: bytes}``), checked against its manifest; or, with
    ``make``, ``make(files)``, kept with the verification so that a process that reads the
    entry again gets the same object back. Raises :class:`Damaged` saying what is wrong.

    ``meta`` must equal the manifest's (apart from its file list); ``expected`` names files
    the entry must hold."""
    try:
        manifest_raw = (entry / MANIFEST).read_bytes()
        manifest = json.loads(manifest_raw)
    except (OSError, ValueError) as exc:
        raise Damaged(f"no readable manifest ({exc.__class__.__name__})") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
        raise Damaged("the manifest lists no files")
    listed = manifest["files"]
    if {k: v for k, v in manifest.items() if k != "files"} != meta:
        raise Damaged("manifest belongs to other inputs")
    missing = set(expected) - set(listed)
    if missing:
        raise Damaged(f"files missing from the manifest: {sorted(missing)}")
    memo = _VERIFIED.pop(str(entry), None)
    known = memo[1] if memo is not None and memo[0] == manifest_raw and memo[1] is not None else {}
    if known and set(known) == set(listed):
        try:
            unchanged = all(_signature(entry / name) == sig for name, sig in known.items())
        except OSError:
            unchanged = False
        if unchanged:
            _VERIFIED[str(entry)] = memo
            return memo[3] if make is not None else memo[2]
    files, signatures = {}, {}
    settled = time.time_ns() - _RACY_NS
    for name, meta_f in sorted(listed.items()):
        path = entry / name
        try:
            before = _signature(path)
            raw = path.read_bytes()
            after = _signature(path)
        except OSError:
            raise Damaged(f"{name} is missing") from None
        if not isinstance(meta_f, dict) or len(raw) != meta_f.get("size") or sha256(raw) != meta_f.get("sha256"):
            raise Damaged(f"{name} does not match its recorded size and hash")
        if before == after and max(after[1], after[2]) < settled:
            signatures[name] = after
        files[name] = raw
    value = make(files) if make is not None else None
    _VERIFIED[str(entry)] = (manifest_raw, signatures if set(signatures) == set(listed) else None, files, value)
    return value if make is not None else files


def link_copy(src: Path, raw: bytes, dest: Path) -> bool:
    """Put ``src`` (a file of an entry, verified to hold ``raw``) at ``dest`` as a hard link, if
    it still holds exactly ``raw``; ``False`` where that cannot be (another file system, a file
    changed since): the caller writes ``raw`` itself.

    A site's figure files are the cache's files: linking them costs a directory entry, where
    writing them again cost 0.5 to 0.7 s a build (700 files, 20 MB). The two names share the
    file: if the site's copy is ever edited in place, the entry no longer matches its manifest
    and is discarded and made again by the next read, never served."""
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        try:
            dest.unlink()
        except FileNotFoundError:
            pass
        os.link(src, dest)
        if dest.read_bytes() == raw:
            return True
        dest.unlink()
    except OSError:
        pass
    return False


def discard(path: Path) -> None:
    """Remove an entry, whatever is in its place (a folder, a plain file, a link)."""
    _VERIFIED.pop(str(path), None)
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        except OSError:
            shutil.rmtree(path, ignore_errors=True)


def publish(folder: Path, entry: Path, meta: dict) -> None:
    """Rename the sealed ``folder`` to ``entry``; if another build got there first with a good
    entry, keep that one. Raises :class:`OSError` if neither can be had."""
    for _ in range(3):
        try:
            os.replace(folder, entry)
            return
        except OSError:
            if not (entry.exists() or entry.is_symlink()):
                continue
            try:
                read(entry, meta)
                shutil.rmtree(folder, ignore_errors=True)  # a concurrent build wrote the same entry
                return
            except Damaged:
                discard(entry)  # damaged (or a plain file): replace it with ours
    shutil.rmtree(folder, ignore_errors=True)
    raise OSError(f"could not move a new cache entry into {entry}")


def put(cache_dir: Path, entry: Path, meta: dict, files: dict) -> None:
    """Write ``files`` (``{name: bytes}``) as the entry ``entry`` of ``cache_dir``, atomically."""
    folder = new_folder(cache_dir)
    try:
        for name, raw in files.items():
            (folder / name).write_bytes(raw)
        seal(folder, meta)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    publish(folder, entry, meta)


def touch(entry: Path) -> None:
    """Mark ``entry`` as used now (its folder's mtime is its last use)."""
    try:
        os.utime(entry)
    except OSError:
        pass


def prune(cache_dir: Path, *, used: set, group=lambda name: name, keep_per_group: int = 1,
          unused_for_s: float = 30 * 24 * 3600) -> None:
    """Keep the entries ``used`` (names) and the ``keep_per_group`` most recently used of each
    ``group(name)``; remove entries unused for ``unused_for_s`` and the temporary folders a
    killed build left (older than a minute, so a concurrent build is not disturbed)."""
    if not cache_dir.is_dir():
        return
    now = time.time()
    by_group: dict = {}
    for path in cache_dir.iterdir():
        try:
            age = now - path.lstat().st_mtime
        except OSError:
            continue
        if path.name.startswith(".tmp-"):
            if age > 60:
                shutil.rmtree(path, ignore_errors=True)
            continue
        if path.name in used:
            by_group.setdefault(group(path.name), []).append((0, -now, path))
            continue
        if age > unused_for_s:
            discard(path)
            continue
        by_group.setdefault(group(path.name), []).append((1, age, path))
    for entries in by_group.values():
        for rank, _, path in sorted(entries, key=lambda e: (e[0], e[1], e[2].name))[keep_per_group:]:
            if rank:
                discard(path)


def reconcile(folder: Path, meta: dict) -> list[str]:
    """For a folder another program writes into file by file (mkdocs-jupyter's notebook cache):
    remove every file that its manifest (written by :func:`seal` after the last build) does not
    list with the same size and SHA-256, so the program makes it again; returns what was removed.
    A manifest for other inputs, or none, removes every file."""
    if not folder.is_dir():
        return []
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        listed = manifest["files"] if {k: v for k, v in manifest.items() if k != "files"} == meta else {}
    except (OSError, ValueError, KeyError, TypeError):
        listed = {}
    removed = []
    for path in sorted(folder.iterdir()):
        if path.name == MANIFEST:
            continue
        want = listed.get(path.name) if isinstance(listed, dict) else None
        try:
            ok = (path.is_file() and not path.is_symlink() and isinstance(want, dict)
                  and path.stat().st_size == want.get("size") and sha256(path.read_bytes()) == want.get("sha256"))
        except OSError:
            ok = False
        if not ok:
            discard(path)
            removed.append(path.name)
    return removed
