"""Where each number comes from (hooks/provenance.py, javascripts/provenance.js): every value the
build inserts carries ``data-source="SCRIPT PATH"`` wherever it stands (prose, a table, a
heading, a caption, code, a formula), nothing of its marks reaches a reader (an attribute, the
table of contents, the search index, a page's description), and the records a reader opens
name the script, its parameters, the command, the stored measurement and the tests.
"""
from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest

from helpers import HOOKS, SMALL_FIGURE, mini_project

sys.path.insert(0, str(HOOKS))
import directives  # noqa: E402
import provenance as P  # noqa: E402

#: a character of the values' marks (or of numbering's references): never in a built file (KaTeX's
#: own glyphs use other private-use characters, U+E020 for \\not)
MARK_CHARS = re.compile("[\ue000\ue001\ue010-\ue012\ue100-\ue1ff]")


def _marked(source="small n", prov="small", text="0.84"):
    return P.token(source, prov, text)


def _no_mark_in(site: Path) -> None:
    """No built text file of ``site`` holds a value's mark or a formula's value wrapper."""
    for path in sorted(site.rglob("*")):
        if path.is_file() and path.suffix in (".html", ".json", ".xml", ".js", ".txt"):
            text = path.read_text(encoding="utf-8", errors="replace")
            assert not MARK_CHARS.search(text), f"{path.relative_to(site)} holds a private-use mark"
            assert "htmlData" not in text, f"{path.relative_to(site)} shows a value's formula wrapper"
            # (each value's record of what the build read, hooks/seen.py: read on the built page, then dropped)
            assert "data-read" not in text and "read=" not in text, f"{path.relative_to(site)} keeps a value's record"


# ---- the marks -----------------------------------------------------------------------------------------

def test_a_value_in_text_becomes_its_span_in_a_formula_html_data_and_in_a_tag_its_text():
    v = _marked()
    html_in = (f'<p title="t {v}">See {v} and <code>{v}</code>.</p>'
               f'<title>{v}</title><p>{_marked("b x.1", "b-1234abcd", "7")}</p>'
               f'<p><span class="arithmatex">\\(x = {v}\\)</span></p>')
    out, keys = P.spans(html_in, "page.md")
    span = '<span class="mha-value" data-source="small n" data-prov="small">0.84</span>'
    assert out == (f'<p title="t 0.84">See {span} and <code>{span}</code>.</p>'
                   '<title>0.84</title>'
                   '<p><span class="mha-value" data-source="b x.1" data-prov="b-1234abcd">7</span></p>'
                   '<p><span class="arithmatex">\\(x = \\htmlData{source=small n, prov=small}{0.84}\\)</span></p>')
    assert keys == ["small", "b-1234abcd"]
    assert P.spans("<p>no value</p>", "p") == ("<p>no value</p>", [])


def test_a_texts_markup_is_text_wherever_it_stands():
    """The token hides a text from Markdown; here it is escaped for the place it landed in."""
    v = _marked("s label", "s", '<b>x</b> *em* `c` & "q"')
    out, _ = P.spans(f'<p title="{v}">{v}</p><pre><code>{v}</code></pre><span class="arithmatex">\\({v}\\)</span>', "p")
    assert '<p title="&lt;b&gt;x&lt;/b&gt; *em* `c` &amp; &quot;q&quot;">' in out
    assert out.count('>&lt;b&gt;x&lt;/b&gt; *em* `c` &amp; "q"</span>') == 2
    assert r'{\text{&lt;b&gt;x&lt;/b&gt; *em* `c` \&amp; "q"}}' in out


@pytest.mark.parametrize("text, tex", [
    ("0.84", "0.84"), ("49,152", "49{,}152"), ("12%", r"12\%"), ("-1.5e-05", r"-1.5\mathrm{e}{-05}"),
    ("1.0E+22", r"1.0\mathrm{E}{+22}"), ("2e-15%", r"2\mathrm{e}{-15}\%"),
    ("attn_head", r"\text{attn\_head}"), ("1_234_567", r"\text{1\_234\_567}"),
    ("x^2 {a} ~3 \\alpha & #$", r"\text{x\textasciicircum{}2 \{a\} \textasciitilde{}3 \textbackslash{}alpha \& \#\$}"),
])
def test_a_value_in_a_formula_is_drawn_as_written(text, tex):
    """In math a text's _ ^ { } ~ \\ are TeX (attn_head drew a subscript, 1_234_567 a wrong
    number) and a grouping comma gets a space: a number stays tight, anything else is \\text.
    An exponent's e is upright and its sign a sign: "1.5e-05" drew as 1.5 times a variable e,
    minus 5 (a binary minus, spaced)."""
    assert P.tex_of(text) == tex


def test_the_formulas_tex_is_unwrapped_with_its_braces_matched():
    both = rf"\(M = {P.math_value('a b', 'k', '49,152')} + {P.math_value('c d', 'k', '{q, k}')}\)"
    assert P.plain_tex(both) == r"\(M = 49{,}152 + \text{\{q, k\}}\)"
    with pytest.raises(P.ProvenanceError, match="letters, digits, _, - and dots"):
        P.math_value("v T.t~x", "v", "1")


def test_a_tags_quoted_greater_than_a_textarea_a_script_and_the_contents_links():
    v = _marked(text='say "hi" <b>')
    out, _ = P.spans(f'<span title="n > 1, {v}">x</span> <textarea>{v}</textarea>', "p.md")
    assert out == ('<span title="n > 1, say &quot;hi&quot; &lt;b&gt;">x</span> '
                   '<textarea>say "hi" &lt;b&gt;</textarea>')
    with pytest.raises(P.ProvenanceError, match=r"p\.md: a \{\{ value \}\} inside a <script> element"):
        P.spans(f"<script>var x = '{v}';</script>", "p.md")
    item = SimpleNamespace(title=f"h {_marked()}", id=f"id-{_marked()}", children=[])
    P.clean_toc([item])
    assert (item.title, item.id) == ("h 0.84", "id-0.84")
    assert P.plain(_marked(text="cost \\(n^2\\)")) == "cost &#92;(n^2&#92;)"  # the nav's math reads no \\(


def test_a_source_with_markup_is_escaped_in_its_attribute():
    value = _marked('a<b "q"', "k", "1")
    out, _ = P.spans(f"<p>{value}</p>", "p")
    assert 'data-source="a&lt;b &quot;q&quot;"' in out


def test_a_token_cut_apart_fails_naming_the_page_never_shows_as_a_box():
    v = _marked()
    cut = v[:5] + "<em>" + v[5:] + "</em>"
    with pytest.raises(P.ProvenanceError, match=r"page\.md: a \{\{ value \}\} was cut apart"):
        P.spans(f"<p>{cut}</p>", "page.md")
    with pytest.raises(P.ProvenanceError, match="was cut apart"):
        P.spans(f"<p>{v[:-1]}</p>", "page.md")  # no closing mark
    with pytest.raises(P.ProvenanceError, match=r"page\.md: .*cannot go into a formula"):
        P.spans(f'<span class="arithmatex">\\({_marked("s a,b", "s", "1")}\\)</span>', "page.md")


def test_plain_text_is_the_values_escaped_text_and_a_table_of_contents_is_cleaned_in_place():
    assert P.plain(f"Base {_marked()} here") == "Base 0.84 here"
    assert P.plain(_marked(text="a<b")) == "a&lt;b"
    assert P.plain("no marks") == "no marks"
    child = SimpleNamespace(title=f"c {_marked()}", id="c", children=[])
    top = SimpleNamespace(title=f"t {_marked()}", id="t", children=[child])
    P.clean_toc([top])
    assert (top.title, child.title) == ("t 0.84", "c 0.84")


def test_a_value_in_a_formula_is_katexs_html_data_and_its_tex_reads_plain():
    tex = P.math_value("small n", "small", "0.84")
    assert tex == r"\htmlData{source=small n, prov=small}{0.84}"
    assert P.plain_tex(rf"\(x = {tex} + 1\)") == r"\(x = 0.84 + 1\)"
    for bad in ("small a,b", "small a=b", "small a}b"):
        with pytest.raises(P.ProvenanceError, match="cannot go into a formula"):
            P.math_value(bad, "small", "1")


def test_a_requests_key_is_its_name_or_its_name_and_a_hash_of_its_parameters():
    import figures

    pe = figures.scripts()["pe_heatmap"]
    assert P.key(pe.request()) == "pe_heatmap"
    other = pe.parse_query("n_positions=16", where="t")
    k = P.key(other)
    assert re.fullmatch(r"pe_heatmap-[0-9a-f]{8}", k) and k != P.key(pe.parse_query("n_positions=17", where="t"))


needs_node = pytest.mark.skipif(shutil.which("node") is None or not (HOOKS.parent / "node_modules" / "katex").is_dir(),
                                reason="node and node_modules/katex (make deps) render the math")


@needs_node
def test_katex_renders_html_data_as_the_values_span_and_refuses_every_other_untrusted_command():
    lines = [json.dumps([r"s = \htmlData{source=a b.c, prov=k}{3}", False]),
             json.dumps([r"\href{https://x.org}{y}", False]), json.dumps([r"\htmlClass{c}{y}", False])]
    out = subprocess.run(["node", str(HOOKS / "katex_render.js")], input="\n".join(lines) + "\n",
                         capture_output=True, text=True, timeout=60, cwd=HOOKS).stdout.splitlines()
    first, href, cls = (json.loads(x) for x in out)
    assert 'data-source="a b.c"' in first["html"] and 'data-prov="k"' in first["html"]
    # the TeX kept for screen readers and copying is the formula as written, without the wrapper
    assert '<annotation encoding="application/x-tex">s = 3</annotation>' in first["html"]
    assert href == {"error": "\\href is not allowed in the course's formulas"}
    assert cls == {"error": "\\htmlClass is not allowed in the course's formulas"}


# ---- the tests and the stored files a record names -----------------------------------------------

def test_the_tests_index_finds_a_script_by_string_identifier_import_and_module_level_list(tmp_path):
    (tmp_path / "test_a.py").write_text(textwrap.dedent('''\
        import figures
        from figures.position import alpha_fig
        NAMES = ["beta_fig", "gamma"]

        def test_reads_alpha():
            assert figures.load("alpha_fig").data()

        @pytest.mark.parametrize("name", NAMES)
        def test_each(name):
            pass

        def test_uses_import():
            alpha_fig.draw

        def test_machine_only():
            run("figures/beta_fig.py --out x.svg")

        def test_other():
            alphabet = "alpha_figure"
        '''))
    (tmp_path / "helper.py").write_text('def test_not_a_test_module(): "alpha_fig"\n')
    found = P.tests_index(tmp_path, ["alpha_fig", "beta_fig", "delta_fig"], ["softmax"])
    assert [t for _, t, _ in found["alpha_fig"]] == ["test_reads_alpha", "test_uses_import"]
    # the test that computes numbers (reads data) comes first
    assert [t for _, t, _ in found["beta_fig"]] == ["test_each", "test_machine_only"] or \
        [t for _, t, _ in found["beta_fig"]] == ["test_machine_only", "test_each"]
    assert found["delta_fig"] == [] and found["softmax"] == []
    assert found["alpha_fig"][0] == ("tests/test_a.py", "test_reads_alpha", 5)


def test_stored_files_name_what_who_machine_and_date(tmp_path):
    (tmp_path / "README.md").write_text(
        "| file | what | made by | machine |\n|---|---|---|---|\n"
        "| `gpu.json` | a `kernel`'s time | `tools/measure.py` | the GPU |\n"
        "| `cpu.json` | a step | `tools/step.py` | a CPU |\n| `w.npz` | weights | `tools/t.py` | as above |\n")
    (tmp_path / "gpu.json").write_text(json.dumps({"machine": {"gpu": "NVIDIA H100", "measured_on": "2026-11-22"}}))
    (tmp_path / "cpu.json").write_text(json.dumps({"date": "2026-11-20", "machine": {"cpu": "Xeon", "cores": 2}}))
    got = P.stored_files(tmp_path)
    assert got["gpu.json"] == {"what": "a kernel's time", "by": "tools/measure.py", "machine": "NVIDIA H100",
                               "date": "2026-11-22"}
    assert got["cpu.json"]["machine"] == "2-core CPU (Xeon)" and got["cpu.json"]["date"] == "2026-11-20"
    assert got["w.npz"] == {"what": "weights", "by": "tools/t.py", "machine": "", "date": ""}


def test_the_projects_stored_files_all_have_their_machine_and_date():
    from figures._kit.contract import DATA_DIR

    got = P.stored_files(DATA_DIR)
    # not measurements: a published model's configuration, and the language model's training text
    measured = {n for n in got if n.endswith(".json") and n not in ("gpt2_small_config.json", "tiny_lm_corpus.json")}
    assert got["tiny_lm_corpus.json"]["by"].startswith("tools/train_lm.py")
    assert measured == {"attention_gpu_h100.json", "attention_memory_measured.json", "decode_cpu.json",
                        "decode_gqa_h100.json", "tiny_decoders.json", "tiny_lm.json"}
    for name in measured:
        assert got[name]["machine"] and re.fullmatch(r"\d{4}-\d\d-\d\d", got[name]["date"]), (name, got[name])
        assert got[name]["by"].startswith("tools/") or "tools/" in got[name]["by"], got[name]
    assert "H100" in got["attention_gpu_h100.json"]["machine"]


def test_a_record_names_the_script_its_parameters_command_stored_files_and_tests():
    import figures

    scripts = figures.scripts()
    request = scripts["flash_memory_time"].request()
    tests = {"flash_memory_time": [("tests/test_claims.py", f"test_{i}", i) for i in range(8)]}
    stored = {"attention_gpu_h100.json": {"what": "w", "by": "b", "machine": "NVIDIA H100", "date": "d"}}
    rec = P.record(request, command="python -m figures flash_memory_time --out flash_memory_time.json",
                   script_url="../scripts/generation/#flash_memory_time", tests=tests, stored=stored,
                   data_files=("attention_gpu_h100.json", "attention_memory_measured.json"))
    assert rec["script"] == "flash_memory_time" and rec["params"] == []
    assert rec["stored"] == [{"file": "figures/data/attention_gpu_h100.json", "what": "w", "by": "b",
                              "machine": "NVIDIA H100", "date": "d"}]
    assert rec["tests"] == [f"tests/test_claims.py::test_{i}" for i in range(P.TESTS_SHOWN)]
    assert rec["tests_total"] == 8
    page = P.records_html({"k": {"title": 'a </div><b> "q" & r'}})
    assert page.count("<") == 2 and page.count('"') == 4  # the element's own, nothing of the text
    assert _records(page) == {"k": {"title": 'a </div><b> "q" & r'}}


# ---- a site: every place a value can stand -----------------------------------------------------------

PAGE = '''\
# Values everywhere

The first: {{ value small n }}.

Prose: {{ value small n }}, and a [link with {{ value small n }}](#x "title {{ value small n }}").

## Heading with {{ value small n }} { #h }

| a | b |
|---|---|
| {{ value small scale .2f }} | `code {{ value small n }}` |

!!! note "Title {{ value small n }}"
    Inside {{ value small?n=5 n }}.

An inline formula over a line break \\(x =
{{ value small n }}\\) and a display one:

\\[
y = {{ value small scale .1f }}
\\]

```text
{{ value small label }}
```

![alt {{ value small n }}](figures/small.svg "caption {{ value small n }}")

Code ``a`b`` then {{ value small?label=%3Cb%3Ex%3C%2Fb%3E+*em* label }}.

Code `\\(` then {{ value small?label=%3Cb%3Ex%3C%2Fb%3E+*em* label }}.

~~~~text
```
{{ value small?label=%3Cb%3Ex%3C%2Fb%3E+*em* label }}
~~~~

    indented {{ value small?label=%3Cb%3Ex%3C%2Fb%3E+*em* label }}

![alt](figures/small.svg?label=A+%26+B "Cap {{ value small?label=A+%26+B+%3C+C label }}")
'''

EXPECTED_SOURCES = 19  # the value directives of PAGE (16 can hold an element)


@pytest.fixture(scope="module")
def value_site(tmp_path_factory):
    base = tmp_path_factory.mktemp("provenance")
    source = SMALL_FIGURE.replace("label=label)", "label=label, n=n, scale=scale)")
    assert source != SMALL_FIGURE
    proj = mini_project(base, {"small": source, "other": SMALL_FIGURE},
                        {"index.md": PAGE, "gallery.md": "# Gallery\n\n{{ gallery }}\n"})
    config = proj / "mkdocs.yml"
    hooks = ", ".join(f'"{HOOKS / h}"' for h in ("site_figures.py", "site_math.py", "site_meta.py", "site_search.py"))
    config.write_text(config.read_text()
                      .replace(f'hooks: ["{HOOKS / "site_figures.py"}"]', f"hooks: [{hooks}]")
                      .replace("markdown_extensions: [attr_list, md_in_html, tables]",
                               "markdown_extensions: [attr_list, md_in_html, tables, admonition, toc, "
                               "{pymdownx.arithmatex: {generic: true}}, pymdownx.superfences]"))
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d",
                             str(base / "site")], cwd=proj, capture_output=True, text=True, timeout=600,
                            env={**__import__("os").environ, "MHA_CACHE_DIR": str(base / "cache"),
                                 "NO_MKDOCS_2_WARNING": "1"})
    assert result.returncode == 0, result.stderr[-3000:]
    return base / "site"


@pytest.mark.build
@needs_node
def test_every_value_carries_its_source_wherever_it_stands(value_site):
    index = (value_site / "index.html").read_text()
    assert PAGE.count("{{ value") == EXPECTED_SOURCES
    sources = [html.unescape(s) for s in re.findall(r'data-source="([^"]*)"', index)]
    # in the page's order: prose, a link's text (its title attribute: none), a heading,
    # a table cell, an admonition's title and body, two formulas, a code block, a caption (the
    # alt text: none); a directive inside inline code is shown as written, as a page's grammar reads it
    assert sources == ["small n"] * 4 + ["small scale", "small n", "small n", "small n", "small scale",
                                         "small label", "small n"] + ["small label"] * 5, sources
    assert "<code>code {{ value small n }}</code>" in index
    assert re.search(r'<h2 id="h">Heading with <span class="mha-value" data-source="small n" data-prov="small">3</span>',
                     index)
    assert re.search(r'<td><span class="mha-value" data-source="small scale" data-prov="small">1.00</span></td>', index)
    assert re.search(r'<p class="admonition-title">Title <span class="mha-value"', index)
    # a value with other parameters has its own key, and its own record
    other = re.search(r'Inside <span class="mha-value" data-source="small n" data-prov="(small-[0-9a-f]{8})"',
                      index).group(1)
    records = _records(index)
    assert set(records) == {"small"} | set(re.findall(r'data-prov="(small-[0-9a-f]{8})"', index))
    assert records[other]["params"] == [["n", 5]] and "--n 5" in records[other]["command"]
    assert records["small"]["command"] == "python figures/small.py --out small.json"
    assert records["small"]["url"].endswith("#small")
    # the formulas: KaTeX's span with the same attributes, the TeX kept plain
    assert len(re.findall(r'<span class="enclosing" data-source="small (n|scale)" data-prov="small">', index)) == 2
    assert re.search(r'<annotation encoding="application/x-tex">x =\s*3</annotation>', index)
    assert re.search(r'<annotation encoding="application/x-tex">\s*y = 1.0\s*</annotation>', index)


@pytest.mark.build
@needs_node
def test_a_text_value_is_text_after_a_code_span_in_any_code_block_and_in_a_caption(value_site):
    """What once went wrong where a value's place was guessed from the Markdown around it: after a
    code span of two backticks or one holding \\(, in a ~~~~ fence holding ```, in an indented
    code block (each showed markup or escapes), and in a caption (escaped twice)."""
    index = (value_site / "index.html").read_text()
    shown = re.findall(r'<span class="mha-value" data-source="small label" data-prov="small-[0-9a-f]{8}">(.*?)</span>',
                       index)
    assert shown == ["&lt;b&gt;x&lt;/b&gt; *em*"] * 4 + ["A &amp; B &lt; C"], shown
    assert "<b>x</b>" not in index and "<em>em</em>" not in index
    assert re.search(r"<figcaption>Cap <span [^>]*>A &amp; B &lt; C</span></figcaption>", index)


@pytest.mark.build
@needs_node
def test_the_gallery_shows_a_pages_caption_with_its_value_and_a_docstring_as_written(value_site):
    gallery = (value_site / "gallery" / "index.html").read_text()
    captions = re.findall(r"<figcaption>(.*?)</figcaption>", gallery, flags=re.S)
    assert 'caption <span class="mha-value" data-source="small n" data-prov="small">3</span>' in captions
    assert any("It draws n points of y = scale * x." in c for c in captions), captions  # not "scale \\* x"


@pytest.mark.build
@needs_node
def test_no_mark_reaches_an_attribute_the_contents_the_title_the_search_or_the_description(value_site):
    _no_mark_in(value_site)
    index = (value_site / "index.html").read_text()
    assert 'title="title 3"' in index and 'alt="alt 3"' in index
    # the table of contents
    assert '<a href="#h" class="nav-link">Heading with 3</a>' in index
    search = json.loads((value_site / "search" / "search_index.json").read_text())
    texts = " ".join(d["title"] + " " + d["text"] for d in search["docs"])
    assert "htmlData" not in texts and "x = 3" in texts.replace("\n", " ")
    heading = [d for d in search["docs"] if d["location"].endswith("#h")]
    assert heading and heading[0]["title"] == "Heading with 3"


@pytest.mark.build
@pytest.mark.parametrize("page, what", [
    ("# Base {{ value small label }}\n\nText.\n", "title 'Base {{ value small label }}'"),
    ("Intro words here.\n\n# Base {{ value small label }}\n\nText.\n", "first heading 'Base {{ value small label }}'"),
    ("Base {{ value small label }}\n====\n\nText.\n", "first heading 'Base {{ value small label }}'"),
    ("---\ndescription: About {{ value small label }} things\n---\n# Base\n\nText.\n",
     "front matter's 'description' 'About {{ value small label }} things'"),
], ids=["atx-title", "heading-after-intro", "setext", "front-matter"])
def test_a_value_in_a_pages_title_or_front_matter_is_refused(tmp_path, page, what):
    """A page's title is its name in the navigation, the credit lines and the gallery, and its
    front matter its link preview: text, shown as written (the gallery once said 'Appears on:
    Base {{ value v n }}', a description showed the directive)."""
    from helpers import mkdocs_build

    proj = mini_project(tmp_path, {"small": SMALL_FIGURE}, page)
    result = mkdocs_build(proj / "mkdocs.yml", tmp_path / "site", tmp_path / "cache")
    assert result.returncode != 0
    assert f"index.md: the page's {what} holds a {{{{ ... }}}}" in result.stderr, result.stderr[-2000:]


# ---- the course -----------------------------------------------------------------------------------------

def _page_file(site: Path, src: str) -> Path:
    return site / ("index.html" if src == "index.md" else src[:-len(".md")] + "/index.html")


def _records(text: str) -> dict:
    out: dict = {}
    for block in re.findall(r'<div class="mha-provenance" hidden data-records="([^"]*)"></div>', text):
        out.update(json.loads(html.unescape(block)))
    return out


@pytest.mark.build
def test_every_value_of_every_page_carries_its_source_and_its_record(built_site):
    """Each page's {{ value }} directives (read from its Markdown, not from the build) show up in
    its HTML as data-source="SCRIPT PATH", in the page's order, each key with its record; every
    figure's and table's reuse row has its record too. The values in a table's or an explorer's
    caption count too (an explorer once published its caption's directives as raw braces); those
    in an alt text are its text, in an attribute (test_no_mark_reaches_an_attribute_...)."""
    docs = HOOKS.parent / "docs"
    total = 0
    for md in sorted(docs.rglob("*.md")):
        src = md.relative_to(docs).as_posix()
        page = md.read_text(encoding="utf-8")
        found = directives.parse(page, where=src)
        alts = [directives.FIGURE_RE.match(page, d.start).span("alt") for d in found if d.keyword == "figure"]
        wanted = [f"{x.name} {x.args[0]}" for d in found
                  if not (d.keyword == "value" and any(a <= d.start < b for a, b in alts))
                  for x in ([d] if d.keyword == "value" else d.inner.get("caption", ()))]
        if not wanted:
            continue
        text = _page_file(built_site, src).read_text(encoding="utf-8")
        shown = [html.unescape(s) for s in re.findall(r'data-source="([^"]*)"', text)]
        rest = iter(shown)
        missing = [w for w in wanted if not any(s == w for s in rest)]
        assert not missing, f"{src}: {len(missing)} values without their source, first {missing[:3]}"
        records = _records(text)
        keys = set(re.findall(r'data-prov="([^"]+)"', text))
        assert keys <= set(records), f"{src}: keys without a record: {sorted(keys - set(records))[:5]}"
        rows = re.findall(r'<p class="mha-reuse"([^>]*)>', text)
        assert all("data-prov=" in r for r in rows), src
        total += len(wanted)
    assert total > 800  # the course's values, counted from its pages


@pytest.mark.build
def test_a_value_in_an_explorers_alt_text_and_caption_and_in_a_tables_caption_is_filled_in(built_site):
    """The extrapolation page's explorer and table (their numbers were typed in): the alt text shows
    the value's text, the captions its span, with the numbers of the figures' data files."""
    live = json.loads((built_site / "figures" / "extrapolation_live.json").read_text(encoding="utf-8"))
    factors = json.loads((built_site / "figures" / "extrapolation_table.json").read_text(encoding="utf-8"))["factors"]
    text = _page_file(built_site, "extrapolation.md").read_text(encoding="utf-8")
    alts = re.findall(r'alt="(Accuracy against sequence length[^"]*)"', text)
    assert len(alts) == 2, alts  # the light and the dark image
    assert all(a.startswith(f"Accuracy against sequence length, {live['lengths'][0]} to {live['max_length']} tokens,")
               for a in alts), alts
    span = '<span class="mha-value" data-source="{}" data-prov="{}">{}</span>'
    caption = re.search(r"<figcaption>.*?The kback models at lengths (.*?) fixed sequences", text, flags=re.S)
    assert caption and caption.group(1) == (
        f"{span.format('extrapolation_live lengths.0', 'extrapolation_live', live['lengths'][0])} to "
        f"{span.format('extrapolation_live max_length', 'extrapolation_live', live['max_length'])}, one seed per "
        f"method, on {span.format('extrapolation_live n_seqs', 'extrapolation_live', live['n_seqs'])}"), caption
    table = re.search(r"<caption>.*?Accuracy on the repeat task at (.*?) the training length", text, flags=re.S)
    shown = [span.format(f"extrapolation_table factors.{i}", "extrapolation_table", f) + "×"
             for i, f in enumerate(factors)]
    assert table and table.group(1) == f"{', '.join(shown[:-1])} and {shown[-1]}", table


@pytest.mark.build
def test_no_page_shows_a_mark_or_a_formulas_wrapper(built_site):
    _no_mark_in(built_site)


@pytest.mark.build
def test_a_stored_measurement_names_its_file_machine_date_and_tool_and_a_script_page_its_tests(built_site):
    from figures._kit.contract import DATA_DIR

    text = _page_file(built_site, "flash_attention.md").read_text(encoding="utf-8")
    record = _records(text)["flash_memory_time"]
    machine = json.loads((DATA_DIR / "attention_gpu_h100.json").read_text())["machine"]
    (gpu,) = [s for s in record["stored"] if s["file"] == "figures/data/attention_gpu_h100.json"]
    assert gpu["machine"] == machine["gpu"] and gpu["date"] == machine["measured_on"]
    assert gpu["by"].startswith("the protocol in tools/measure_attention_gpu.py")
    assert record["command"] == "python -m figures flash_memory_time --out flash_memory_time.json"
    assert record["url"] == "../scripts/generation/#flash_memory_time"
    found = P.tests_index(HOOKS.parent / "tests", ["flash_memory_time"], [])["flash_memory_time"]
    assert record["tests_total"] == len(found) >= 2
    assert "tests/test_claims.py" in {f for f, _, _ in found}
    scripts = (built_site / "scripts" / "generation" / "index.html").read_text(encoding="utf-8")
    section = scripts[scripts.index('id="flash_memory_time"'):]
    listed = re.findall(r"<li><code>(tests/[^<]+)</code> \(line (\d+)\)</li>", section.split("<h2", 1)[0])
    assert [(f"{f}::{t}", str(n)) for f, t, n in found] == listed
