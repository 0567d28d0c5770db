"""The lines a reuse row prints run as printed, where they say they run: in a fresh virtual
environment outside the repository, with nothing but the site's wheel and the install line the
row gives (pip's cache is used, as a reader's second install would). Each command writes the
file the site serves, byte for byte: a figure, a table and a figure with parameters from the
wheel, then a figure that reads a stored file the wheel does not carry, from the source archive.

The commands are read from the built pages (reuse rows and script pages), as a reader copies
them; one venv serves all four (the archive's install replaces the wheel's, as it would for a
reader who goes on to it).
"""
from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import ROOT, reuse_rows, script_section

pytestmark = pytest.mark.build


def _rows(built_site: Path) -> dict:
    """File stem -> (install lines, command, page) of every reuse row of the site."""
    return {stem: (installs, command, built_site / page) for page, installs, command, stem in reuse_rows(built_site)}


def _script_page_lines(built_site: Path, name: str) -> list[str]:
    page, _ = script_section(built_site, name)
    block = re.search(r'<div class="highlight"><pre>.*?<code>(.*?)</code></pre>', page, flags=re.S).group(1)
    return html.unescape(re.sub(r"<[^>]+>", "", block)).strip().splitlines()


def _site_file(built_site: Path, stem: str, command: str) -> Path:
    ext = command.split("--out ", 1)[1].split()[0].rsplit(".", 1)[1]
    return built_site / "figures" / f"{stem}.{ext}"


def test_the_printed_lines_make_the_sites_files_in_a_fresh_venv_outside_the_repository(built_site, tmp_path):
    rows = _rows(built_site)
    cases = {"figure": "pe_heatmap", "table": "wavelength_table",
             "figure with parameters": next(s for s in sorted(rows) if s.startswith("pe_heatmap--"))}
    for what, stem in cases.items():
        installs, command, page = rows[stem]
        assert command.startswith("python -m figures "), (what, page, command)
        assert installs == rows["pe_heatmap"][0], (what, page, installs)  # one venv serves all three
    installs = rows["pe_heatmap"][0]
    (wheel,) = (built_site / "downloads").glob("mhalib-*.whl")
    assert installs == [f'pip install "{wheel.name}[figures]"'], installs
    # the script page prints the same lines
    assert _script_page_lines(built_site, "pe_heatmap") == installs + [rows["pe_heatmap"][1]]

    work = tmp_path / "reader"  # outside the repository, with the wheel alone, as a reader has it
    work.mkdir()
    assert ROOT not in work.parents
    shutil.copy(wheel, work / wheel.name)
    venv = tmp_path / "venv"
    start = time.monotonic()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "MPLBACKEND")}
    env.update(PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}", VIRTUAL_ENV=str(venv),
               PIP_DISABLE_PIP_VERSION_CHECK="1")

    def sh(line: str, timeout: float) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", "-c", line], cwd=work, env=env, capture_output=True, text=True, timeout=timeout)

    for line in installs:
        done = sh(line, 900)
        assert done.returncode == 0, f"{line!r} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    installed = time.monotonic()
    which = sh("python -c 'import figures, matplotlib; print(figures.__file__)'", 120)
    assert which.stdout.strip().startswith(str(venv)), which.stdout + which.stderr
    for what, stem in cases.items():
        _, command, page = rows[stem]
        done = sh(command, 300)
        assert done.returncode == 0, f"{what}: {command!r} (from {page}) failed:\n{done.stderr[-3000:]}"
        out = work / command.split("--out ", 1)[1].split()[0]
        expected = _site_file(built_site, stem, command)
        assert out.read_bytes() == expected.read_bytes(), (
            f"{what}: {command!r} wrote {out.name}, which differs from the site's {expected.name}")
        out.unlink()
    three = time.monotonic()

    # a figure that reads the tiny decoders' weights, which the wheel does not carry: its lines
    # unpack the source archive, install the project and run the command in its folder
    installs, command, page = rows["extrapolation_attention_maps"]
    (archive,) = (built_site / "downloads").glob("mha-course-*-src.tar.gz")
    folder = archive.name.removesuffix("-src.tar.gz")
    assert installs == [f"tar xzf {archive.name}", f"cd {folder}", 'pip install ".[figures]"'], (page, installs)
    shutil.copy(archive, work / archive.name)
    done = sh(" && ".join(installs + [command]), 900)  # one shell: the cd holds for the lines after it
    assert done.returncode == 0, f"{installs + [command]} (from {page}) failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    out = work / folder / command.split("--out ", 1)[1].split()[0]
    expected = _site_file(built_site, "extrapolation_attention_maps", command)
    assert out.read_bytes() == expected.read_bytes(), f"{command!r} from the archive differs from the site's file"
    print(f"\nfresh venv: {installed - start:.1f} s to create and install the wheel, "
          f"{three - installed:.1f} s for its three commands, {time.monotonic() - three:.1f} s for the archive's lines")
