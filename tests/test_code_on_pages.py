"""Code on the pages is mhalib's own source, included when the site is built.

The concept pages show the lines of ``mhalib`` that compute what they teach through
pymdownx.snippets: a page writes ``--8<-- "mhalib/softmax.py:softmax"`` inside a code
block, and the build copies the lines between ``# --8<-- [start:softmax]`` and
``# --8<-- [end:softmax]`` from the file. These tests hold that arrangement:

- each concept page includes the sections it must show, in an "In code" section placed
  right before its summary;
- every section a page names exists, is closed exactly once, and has lines short enough
  to read in the content column;
- a missing file or section stops the build (snippets' ``check_paths``), and a section
  left open in mhalib (which snippets would silently read to the end of the file) fails
  here;
- in the built site, each such code block is exactly the source region read from the
  file, so a page cannot drift from the code.
"""
from __future__ import annotations

import re
import textwrap
from html import unescape
from pathlib import Path

import pytest
import yaml

from helpers import ROOT, mkdocs_build

SNIPPET = re.compile(r'^[ \t]*--8<-- "(?P<path>[^"]+?):(?P<name>[A-Za-z][-\w]*)"[ \t]*$')
MARKER = re.compile(r"--8<--[ \t]+\[[ \t]*(?P<kind>start|end)[ \t]*:[ \t]*(?P<name>[A-Za-z][-\w]*)[ \t]*\]")
FENCE = re.compile(r"^(?P<indent>[ \t]*)```")
MAX_LINE = 90  # characters: the desktop content column shows about 80 of them

# Each concept page and the sections of mhalib it must show (a signature section,
# "NAME-signature", goes with the body section NAME and is checked with it).
REQUIRED = {
    "attention": ["mhalib/softmax.py:softmax", "mhalib/attention.py:attention"],
    "numerics": ["mhalib/softmax.py:softmax"],
    "mha": ["mhalib/heads.py:split_combine", "mhalib/mha.py:mha", "mhalib/torch_ref.py:torch-mha"],
    "cross_attention": ["mhalib/examples.py:encoder-decoder"],
    "sinusoidal": ["mhalib/sinusoidal.py:frequencies", "mhalib/sinusoidal.py:sinusoidal",
                   "mhalib/torch_ref.py:torch-sinusoidal"],
    "rope": ["mhalib/rope.py:rope", "mhalib/torch_ref.py:torch-rope"],
    "alibi": ["mhalib/alibi.py:slopes", "mhalib/alibi.py:bias"],
    "learned": ["mhalib/learned.py:learned"],
    "sampling": ["mhalib/sampling.py:top-k-top-p"],
}
TABBED = ["mha", "sinusoidal", "rope"]  # numpy (mhalib) / PyTorch side by side


def section(path: str, name: str) -> list[str]:
    """The lines of section ``name`` of ``path``, as the page must show them: between its
    start and end markers, without marker lines. Fails unless each marker occurs once."""
    lines = (ROOT / path).read_text().split("\n")
    found = {"start": [], "end": []}
    for i, line in enumerate(lines):
        m = MARKER.search(line)
        if m and m["name"] == name:
            found[m["kind"]].append(i)
    assert len(found["start"]) == 1 and len(found["end"]) == 1, \
        f"{path}: section {name!r} needs exactly one start and one end marker, found {found}"
    (start,), (end,) = found["start"], found["end"]
    assert start < end, f"{path}: section {name!r} ends (line {end + 1}) before it starts"
    return [line for line in lines[start + 1:end] if not MARKER.search(line)]


def code_blocks(page: str) -> list[list[str]]:
    """The fenced code blocks of docs/<page>.md that include sections: for each, its
    lines inside the fence (dedented), snippet lines and blank lines only."""
    blocks, current = [], None
    for line in (ROOT / "docs" / f"{page}.md").read_text().split("\n"):
        if FENCE.match(line):
            if current is None:
                current = []
            else:
                if any(SNIPPET.match(x) for x in current):
                    blocks.append(current)
                current = None
        elif current is not None:
            current.append(line.strip())
    return blocks


def expected_text(block: list[str]) -> str:
    """What the built page must show for a block: each snippet line replaced by its section."""
    out = []
    for line in block:
        m = SNIPPET.match(line)
        assert m or not line, f"a code block that includes mhalib code holds other text: {line!r}"
        out.extend(section(m["path"], m["name"]) if m else [""])
    return "\n".join(out).strip("\n")


def included(page: str) -> list[str]:
    return [f'{m["path"]}:{m["name"]}' for block in code_blocks(page) for m in map(SNIPPET.match, block) if m]


def snippets_config() -> dict:
    """The pymdownx.snippets settings of mkdocs.yml, with ``!relative`` resolved to the root."""
    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("!relative", lambda loader, suffix, node: str(ROOT))
    Loader.add_multi_constructor("", lambda loader, suffix, node: None)
    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=Loader)
    for ext in config["markdown_extensions"]:
        if isinstance(ext, dict) and "pymdownx.snippets" in ext:
            return ext["pymdownx.snippets"]
    raise AssertionError("mkdocs.yml does not configure pymdownx.snippets")


# --- the pages and the source (fast) -------------------------------------------------

@pytest.mark.parametrize("page", sorted(REQUIRED))
def test_each_concept_page_includes_its_code_in_an_in_code_section_before_the_summary(page):
    names = included(page)
    for required in REQUIRED[page]:
        assert required in names, f"docs/{page}.md does not include {required}"
    md = (ROOT / "docs" / f"{page}.md").read_text()
    assert md.count("\n## In code\n") == 1, f"docs/{page}.md needs one '## In code' section"
    start, summary = md.index("\n## In code\n"), md.index('!!! success "Summary"')
    assert start < summary, f"docs/{page}.md: 'In code' must come before the summary"
    between = md[start + 1:summary]
    assert not re.search(r"^#{1,2} ", between[2:], re.M), \
        f"docs/{page}.md: 'In code' must be the last section before the summary"
    assert all(md.index(f'"{name}"') > start for name in names), \
        f"docs/{page}.md: its included code belongs in the 'In code' section"
    first_words = between.split("```")[0]
    assert len(first_words.split()) >= 20, \
        f"docs/{page}.md: say what to look for in the code before showing it"


@pytest.mark.parametrize("page", TABBED)
def test_numpy_and_pytorch_side_by_side(page):
    md = (ROOT / "docs" / f"{page}.md").read_text()
    assert '=== "numpy (mhalib)"' in md and '=== "PyTorch"' in md


def test_every_signature_section_is_shown_with_its_body():
    for page in REQUIRED:
        for block in code_blocks(page):
            names = [m["name"] for m in map(SNIPPET.match, block) if m]
            for i, name in enumerate(names):
                if name.endswith("-signature"):
                    assert names[i + 1:i + 2] == [name.removesuffix("-signature")], \
                        f"docs/{page}.md: {name} must be followed by its body section"


def test_included_sections_exist_once_and_fit_the_column():
    for page in REQUIRED:
        for block in code_blocks(page):
            text = expected_text(block)  # asserts that each section exists exactly once
            assert text.strip(), f"docs/{page}.md includes an empty section"
            for line in text.split("\n"):
                assert len(line) <= MAX_LINE, f"docs/{page}.md shows a line of {len(line)} characters: {line}"


def test_every_section_in_mhalib_is_closed():
    """A start marker without its end makes snippets read to the end of the file, silently."""
    for path in sorted((ROOT / "mhalib").rglob("*.py")):
        opened: dict[str, int] = {}
        for n, line in enumerate(path.read_text().split("\n"), 1):
            m = MARKER.search(line)
            if not m:
                continue
            if m["kind"] == "start":
                assert m["name"] not in opened, f"{path.name}:{n}: section {m['name']!r} started twice"
                opened[m["name"]] = n
            else:
                assert opened.pop(m["name"], None), f"{path.name}:{n}: section {m['name']!r} ends before it starts"
        assert not opened, f"{path.name}: sections never closed: {opened}"


def test_snippets_config_makes_a_missing_file_or_section_an_error(tmp_path):
    import markdown
    from pymdownx.snippets import SnippetMissingError

    config = snippets_config()
    assert config.get("check_paths") is True
    assert config["base_path"] == [str(ROOT)]

    def render(line: str) -> str:
        md = markdown.Markdown(extensions=["pymdownx.snippets", "pymdownx.superfences"],
                               extension_configs={"pymdownx.snippets": config})
        return md.convert(f"```python\n{line}\n```\n")

    assert "row_max" in render('--8<-- "mhalib/softmax.py:softmax"')
    with pytest.raises(SnippetMissingError, match="softmaxx"):
        render('--8<-- "mhalib/softmax.py:softmaxx"')
    with pytest.raises(SnippetMissingError, match="nowhere.py"):
        render('--8<-- "mhalib/nowhere.py:softmax"')


def test_serve_watches_mhalib():
    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("", lambda loader, suffix, node: None)
    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=Loader)
    assert "mhalib" in (config.get("watch") or []), "mkdocs serve must rebuild when mhalib changes"


# --- the built site -------------------------------------------------------------------

def html_code_blocks(html: str) -> list[str]:
    """The text of every highlighted code block of a built page, highlighting removed."""
    out = []
    for code in re.findall(r"<pre[^>]*>(?:<span></span>)?<code[^>]*>(.*?)</code></pre>", html, flags=re.S):
        out.append(unescape(re.sub(r"<[^>]+>", "", code)).strip("\n"))
    return out


@pytest.mark.build
@pytest.mark.parametrize("page", sorted(REQUIRED))
def test_built_page_shows_the_source_exactly(built_site, page):
    html = (built_site / page / "index.html").read_text()
    shown = html_code_blocks(html)
    blocks = code_blocks(page)
    assert blocks
    for block in blocks:
        expected = expected_text(block)
        assert expected in shown, (
            f"{page}: a code block differs from the source it includes ({block[0]}); "
            f"expected:\n{expected[:400]}\nshown:\n" + "\n---\n".join(s[:400] for s in shown))
    assert 'id="in-code"' in html
    if page in TABBED:
        assert "numpy (mhalib)" in html and "PyTorch" in html


@pytest.mark.build
def test_a_wrong_section_name_fails_the_strict_build(tmp_path):
    """The same snippets settings as the site, in a one-page project: a section that the
    file does not have stops ``mkdocs build --strict``."""
    proj = tmp_path / "proj"
    (proj / "docs").mkdir(parents=True)
    (proj / "lib").mkdir()
    (proj / "lib" / "code.py").write_text("# --8<-- [start:real]\nx = 1\n# --8<-- [end:real]\n")
    config = snippets_config()
    (proj / "mkdocs.yml").write_text(textwrap.dedent(f"""\
        site_name: snippets check
        markdown_extensions:
          - pymdownx.superfences
          - pymdownx.snippets:
              base_path: [!relative $config_dir]
              check_paths: {str(config["check_paths"]).lower()}
        """))
    for name, ok in [("real", True), ("unreal", False)]:
        (proj / "docs" / "index.md").write_text(f'# Code\n\n```python\n--8<-- "lib/code.py:{name}"\n```\n')
        result = mkdocs_build(proj / "mkdocs.yml", tmp_path / f"site-{name}", tmp_path / "cache")
        assert (result.returncode == 0) == ok, result.stderr[-2000:]
        if not ok:
            assert "unreal" in result.stderr and "could not be located" in result.stderr
        else:
            assert "x</span> <span class=\"o\">=</span>" in (tmp_path / f"site-{name}" / "index.html").read_text()
