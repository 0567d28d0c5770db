"""The downloads the site serves (hooks/downloads.py): which files, the same bytes twice,
the cache, and a wheel that installs and works outside the repository.

Fast tests use the real project's file list and small fixture projects; the wheel is
built by setuptools in a subprocess (about 2 s), so those tests are marked ``slow``.
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from helpers import ROOT

sys.path.insert(0, str(ROOT / "hooks"))
import downloads  # noqa: E402

EPOCH = 1_700_000_000


def _git(cwd: Path, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t")
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def tiny(tmp_path) -> Path:
    """A git project with a two-module mhalib, a figures package and files git ignores."""
    proj = tmp_path / "proj"
    (proj / "mhalib").mkdir(parents=True)
    (proj / "figures" / "data").mkdir(parents=True)
    (proj / "tools").mkdir()
    (proj / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=68"]\nbuild-backend = "setuptools.build_meta"\n\n'
        '[project]\nname = "mhalib"\nversion = "2.3.4"\nrequires-python = ">=3.11"\n\n'
        '[tool.setuptools.packages.find]\ninclude = ["mhalib*", "figures*"]\n\n'
        '[tool.setuptools.package-data]\nfigures = ["data/*.json"]\n')
    (proj / "README.md").write_text("# tiny\n")
    (proj / "mhalib" / "__init__.py").write_text("from .two import TWO\n")
    (proj / "mhalib" / "two.py").write_text("TWO = 2\n")
    (proj / "figures" / "__init__.py").write_text("")
    (proj / "figures" / "data" / "m.json").write_text('{"x": 1}\n')
    (proj / "tools" / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (proj / "tools" / "run.sh").chmod(0o755)
    (proj / ".gitignore").write_text(".cache/\nsite/\n*.log\n")
    _git(proj, "init", "-q")
    _git(proj, "add", ".")
    _git(proj, "commit", "-q", "-m", "init")
    (proj / "notes.log").write_text("ignored\n")
    (proj / ".cache").mkdir()
    (proj / ".cache" / "x").write_text("ignored\n")
    return proj


def test_names_come_from_pyproject(tiny):
    assert downloads.file_names(ROOT) == {"wheel": f"mhalib-{downloads.project_meta(ROOT)[1]}-py3-none-any.whl",
                                          "source": f"mha-course-{downloads.project_meta(ROOT)[1]}-src.tar.gz"}
    assert downloads.file_names(tiny) == {"wheel": "mhalib-2.3.4-py3-none-any.whl",
                                          "source": "mha-course-2.3.4-src.tar.gz"}
    (tiny / "pyproject.toml").write_text('[project]\nname = "Some.Lib-x"\nversion = "1.0"\n')
    assert downloads.file_names(tiny)["wheel"] == "some_lib_x-1.0-py3-none-any.whl"
    (tiny / "pyproject.toml").write_text('[project]\nname = "x"\n')
    with pytest.raises(downloads.DownloadError, match="name and version"):
        downloads.project_meta(tiny)
    (tiny / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "1/2"\n')
    with pytest.raises(downloads.DownloadError, match="cannot name a file"):
        downloads.project_meta(tiny)


def test_project_files_in_git_are_tracked_and_new_unignored_ones(tiny):
    (tiny / "mhalib" / "three.py").write_text("THREE = 3\n")  # new, not ignored: the build uses it
    (tiny / "README.md").unlink()  # tracked but deleted: not on disk, not in the downloads
    files = dict(downloads.project_files(tiny))
    assert sorted(files) == [".gitignore", "figures/__init__.py", "figures/data/m.json", "mhalib/__init__.py",
                             "mhalib/three.py", "mhalib/two.py", "pyproject.toml", "tools/run.sh"]
    assert files["tools/run.sh"] == 0o755 and files["pyproject.toml"] == 0o644
    assert [rel for rel, _ in downloads.wheel_inputs(sorted(files.items()))] == [
        ".gitignore", "figures/__init__.py", "figures/data/m.json", "mhalib/__init__.py", "mhalib/three.py",
        "mhalib/two.py", "pyproject.toml"]


def test_the_real_project_files_leave_out_what_git_ignores():
    rels = [rel for rel, _ in downloads.project_files(ROOT)]
    assert "pyproject.toml" in rels and "mhalib/__init__.py" in rels and "hooks/downloads.py" in rels
    assert not [r for r in rels if r.startswith(("node_modules/", ".cache/", "site/", ".venv/", "test-output/"))]
    assert not [r for r in rels if "__pycache__" in r or r.endswith(".pyc")]


def test_source_archive_is_the_same_bytes_twice_and_reads_back(tiny, tmp_path):
    files = downloads.project_files(tiny)
    a, b, later = tmp_path / "a.tar.gz", tmp_path / "b.tar.gz", tmp_path / "c.tar.gz"
    downloads.write_source_archive(tiny, files, "mha-course-2.3.4", EPOCH, a)
    downloads.write_source_archive(tiny, list(reversed(files)), "mha-course-2.3.4", EPOCH, b)
    downloads.write_source_archive(tiny, files, "mha-course-2.3.4", EPOCH + 1, later)
    assert a.read_bytes() == b.read_bytes() != later.read_bytes()
    raw = a.read_bytes()
    assert raw[:2] == b"\x1f\x8b" and int.from_bytes(raw[4:8], "little") == EPOCH  # gzip header date
    assert raw[3] & 0x08 == 0  # no file name in the gzip header
    with tarfile.open(a) as tar:
        members = tar.getmembers()
        assert [m.name for m in members] == [f"mha-course-2.3.4/{rel}" for rel, _ in files]
        assert {(m.uid, m.gid, m.uname, m.gname, m.mtime) for m in members} == {(0, 0, "", "", EPOCH)}
        modes = {m.name.split("/", 1)[1]: m.mode for m in members}
        assert modes["tools/run.sh"] == 0o755 and modes["pyproject.toml"] == 0o644
        assert tar.extractfile("mha-course-2.3.4/mhalib/two.py").read() == b"TWO = 2\n"


def test_outside_git_the_extracted_archive_lists_the_same_files(tmp_path):
    """A reader who builds from the source archive (no .git) gets the same downloads' contents."""
    files = downloads.project_files(ROOT)
    target = tmp_path / "src.tar.gz"
    downloads.write_source_archive(ROOT, files, "p", EPOCH, target)
    with tarfile.open(target) as tar:
        tar.extractall(tmp_path / "x", filter="data")
    extracted = tmp_path / "x" / "p"
    (extracted / "site").mkdir()  # what a build there leaves behind is not a source
    (extracted / "site" / "index.html").write_text("x")
    (extracted / "mhalib" / "__pycache__").mkdir()
    (extracted / "mhalib" / "__pycache__" / "a.pyc").write_bytes(b"x")
    (extracted / "mhalib.egg-info").mkdir()
    (extracted / "mhalib.egg-info" / "PKG-INFO").write_text("x")
    (extracted / "elsewhere").mkdir()
    (extracted / "elsewhere" / "out.txt").write_text("x")
    listed = downloads.project_files(extracted, exclude=(extracted / "elsewhere",))
    assert listed == files


def test_sizes_read_like_pips():
    assert [downloads.human_size(n) for n in (0, 999, 1000, 152_598, 999_499, 999_600, 1_000_000, 2_345_678)] == [
        "0 B", "999 B", "1 kB", "153 kB", "999 kB", "1.0 MB", "1.0 MB", "2.3 MB"]


@pytest.mark.slow
def test_builds_are_cached_by_content_and_repeatable(tiny, tmp_path):
    cache = tmp_path / "cache"
    logs: list[str] = []
    first = downloads.build_downloads(tiny, cache, epoch=EPOCH, log=logs.append)
    assert {k: b.cached for k, b in first.items()} == {"source": False, "wheel": False}
    assert [b.path.name for b in first.values()] == ["mha-course-2.3.4-src.tar.gz", "mhalib-2.3.4-py3-none-any.whl"]
    assert not (tiny / "build").exists() and not list(tiny.glob("*.egg-info"))  # built in a scratch copy
    # nothing changed: nothing is rebuilt
    again = downloads.build_downloads(tiny, cache, epoch=EPOCH, log=logs.append)
    assert {k: b.cached for k, b in again.items()} == {"source": True, "wheel": True}
    assert {k: b.path for k, b in again.items()} == {k: b.path for k, b in first.items()}
    # a clean build elsewhere gives the same bytes
    other = downloads.build_downloads(tiny, tmp_path / "cache2", epoch=EPOCH, log=logs.append)
    assert {k: _sha(b.path) for k, b in other.items()} == {k: _sha(b.path) for k, b in first.items()}
    # a test file changes: only the archive holds it; a library file: both are rebuilt
    (tiny / "tools" / "run.sh").write_text("#!/bin/sh\necho bye\n")
    after = downloads.build_downloads(tiny, cache, epoch=EPOCH, log=logs.append)
    assert {k: b.cached for k, b in after.items()} == {"source": False, "wheel": True}
    (tiny / "mhalib" / "two.py").write_text("TWO = 2.0\n")
    after = downloads.build_downloads(tiny, cache, epoch=EPOCH, log=logs.append)
    assert {k: b.cached for k, b in after.items()} == {"source": False, "wheel": False}
    with zipfile.ZipFile(after["wheel"].path) as whl:
        assert whl.read("mhalib/two.py") == b"TWO = 2.0\n"
        assert whl.read("figures/data/m.json") == b'{"x": 1}\n'  # package data
        assert {i.date_time for i in whl.infolist()} == {(2023, 11, 14, 22, 13, 20)}  # SOURCE_DATE_EPOCH
        assert "Version: 2.3.4" in whl.read("mhalib-2.3.4.dist-info/METADATA").decode()
    # another epoch (a new commit): new bytes, never the old entry
    later = downloads.build_downloads(tiny, cache, epoch=EPOCH + 86400, log=logs.append)
    assert not any(b.cached for b in later.values()) and _sha(later["wheel"].path) != _sha(after["wheel"].path)


@pytest.mark.slow
def test_a_damaged_cache_entry_is_rebuilt_loudly(tiny, tmp_path):
    cache = tmp_path / "cache"
    first = downloads.build_downloads(tiny, cache, epoch=EPOCH, log=lambda m: None)
    good = {k: _sha(b.path) for k, b in first.items()}
    first["wheel"].path.write_bytes(b"not a wheel")
    (first["source"].path.parent / "manifest.json").unlink()
    logs: list[str] = []
    again = downloads.build_downloads(tiny, cache, epoch=EPOCH, log=logs.append)
    assert not any(b.cached for b in again.values())
    assert {k: _sha(b.path) for k, b in again.items()} == good
    assert sum("damaged" in m for m in logs) == 2


@pytest.mark.slow
def test_a_wheel_build_failure_names_the_cause(tiny, tmp_path):
    (tiny / "pyproject.toml").write_text((tiny / "pyproject.toml").read_text().replace(
        'build-backend = "setuptools.build_meta"', 'build-backend = "setuptools.build_meta"\n[project.urls]\nx = 1'))
    with pytest.raises(downloads.DownloadError, match="building the wheel failed"):
        downloads.build_downloads(tiny, tmp_path / "cache", epoch=EPOCH, log=lambda m: None)
    assert not [p for p in (tmp_path / "cache").iterdir() if p.name.startswith(("wheel-", ".tmp-"))]


def test_setuptools_too_old_is_refused(monkeypatch):
    import importlib.metadata

    monkeypatch.setattr(importlib.metadata, "version", lambda name: "65.5.0")
    with pytest.raises(downloads.DownloadError, match=r"setuptools >= 68.*has 65.5.0"):
        downloads.setuptools_version()


@pytest.mark.slow
def test_the_wheel_installs_in_a_fresh_venv_and_works_outside_the_repository(tmp_path):
    """pip install --no-deps into an empty venv; numpy and matplotlib come from the test
    environment through a .pth file placed after the venv's own site-packages."""
    import sysconfig

    built = downloads.build_downloads(ROOT, tmp_path / "cache", epoch=EPOCH, log=lambda m: None)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "--no-index",
                    "--quiet", "--disable-pip-version-check", str(built["wheel"].path)], check=True)
    site = Path(subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "zz_test_env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["MPLBACKEND"] = "Agg"
    work = tmp_path / "elsewhere"
    work.mkdir()
    code = ("import json, mhalib, figures; from mhalib.exercises import check;"
            "print(json.dumps([mhalib.__file__, figures.__file__, mhalib.alibi_slopes(8).tolist()]))")
    run = subprocess.run([str(py), "-c", code], cwd=work, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    lib, figs, slopes = json.loads(run.stdout)
    assert lib.startswith(str(site)) and figs.startswith(str(site))
    assert slopes == [2.0 ** -(i + 1) for i in range(8)]
    # the reuse line on "Get the code": a figure that reads a stored measurement file
    run = subprocess.run([str(py), "-m", "figures", "decode_step_time", "--out", "t.csv"], cwd=work, env=env,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert (work / "t.csv").read_text().count("\n") > 2

