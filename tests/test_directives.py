"""The page grammar, without a build: what parses, what is refused, and how errors read."""
from __future__ import annotations

import sys

import pytest

import figures
from helpers import HOOKS

sys.path.insert(0, str(HOOKS))
import directives as D  # noqa: E402


def one(text):
    found = D.parse(text, where="p.md")
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize("text, keyword, name, query, args", [
    pytest.param("{{ table wavelength_table }}", "table", "wavelength_table", "", (), id="table"),
    pytest.param("{{table cat_sat_mat_scores?causal=true}}", "table", "cat_sat_mat_scores", "causal=true", (),
                 id="table-no-spaces-with-query"),
    pytest.param("x {{ value pe_heatmap?d_model=4 pe.2.0 .2f }} y", "value", "pe_heatmap", "d_model=4",
                 ("pe.2.0", ".2f"), id="value-inline-with-format"),
    pytest.param('{{ value heads_in_action "maps.Head 2 flipped.head2.0.3" .2f }}', "value", "heads_in_action",
                 "", ("maps.Head 2 flipped.head2.0.3", ".2f"), id="value-quoted-path-with-spaces"),
    pytest.param("{{ value attention_memory_measured max_T , }}", "value", "attention_memory_measured", "",
                 ("max_T", ","), id="value-thousands-format"),
    pytest.param("{{ value pe_heatmap max_error 0=+9.2f }}", "value", "pe_heatmap", "", ("max_error", "0=+9.2f"),
                 id="value-format-with-=-alignment-and-zeros"),
    pytest.param("{{ value pe_heatmap max_error 0=8.2f allow=inf }}", "value", "pe_heatmap", "",
                 ("max_error", "0=8.2f"), id="value-format-with-fill-and-=-alignment"),
    pytest.param("{{ gallery }}", "gallery", "", "", (), id="gallery"),
    pytest.param('![A heatmap](figures/pe_heatmap.svg?d_model=4&n_positions=4 "PE, d = 4.")', "figure",
                 "pe_heatmap", "d_model=4&n_positions=4", (), id="figure-with-query-and-caption"),
])
def test_valid_directives_parse(text, keyword, name, query, args):
    d = one(text)
    assert (d.keyword, d.name, d.query, d.args) == (keyword, name, query, args)
    assert text[d.start:d.end] == d.raw


def test_explorer_and_gallery_options():
    d = one('{{ explorer pe_heatmap?d_model=16 alt="A heatmap of PE" caption="Static: 16 dims." }}')
    assert d.options == {"alt": "A heatmap of PE", "caption": "Static: 16 dims."} and d.query == "d_model=16"
    assert one("{{ gallery only=bert_ }}").options == {"only": "bert_"}


def test_a_value_in_an_explorers_alt_and_caption_and_in_a_tables_caption_is_read_with_its_line():
    """The whole {{ explorer ... }} is one directive: the values in its quoted options were found by
    nothing, and a page published them as raw braces (an explorer) or failed to render them (a table)."""
    text = ('# T\n\n{{ explorer pe_heatmap?d_model=16 alt="For {{ value pe_heatmap?d_model=16 n_positions }} '
            'positions" caption="Static: {{ value pe_heatmap?d_model=16 d_model }} dims, a<b." }}\n\n'
            '{{ table wavelength_table caption="At \\(D = {{ value wavelength_table d_model }}\\)." }}\n')
    explorer, table = D.parse(text, where="p.md")
    assert [(k, [(x.keyword, x.name, x.query, x.args, x.line) for x in v]) for k, v in explorer.inner.items()] == [
        ("alt", [("value", "pe_heatmap", "d_model=16", ("n_positions",), 3)]),
        ("caption", [("value", "pe_heatmap", "d_model=16", ("d_model",), 3)])]
    caption = explorer.options["caption"]
    assert caption == "Static: {{ value pe_heatmap?d_model=16 d_model }} dims, a&lt;b."  # its offsets: this text's
    assert D.substitute(caption, explorer.inner["caption"], lambda x: "16") == "Static: 16 dims, a&lt;b."
    (value,) = table.inner["caption"]
    assert (value.name, value.args, value.line) == ("wavelength_table", ("d_model",), 5)
    assert one("{{ table wavelength_table caption=\"No value here.\" }}").inner == {}


@pytest.mark.parametrize("text, message", [
    pytest.param('\n{{ explorer pe_heatmap caption="See {{ ref fig:x }}." }}',
                 r"p\.md:2: '\{\{ ref fig:x \}\}' in the caption of .*may hold \{\{ value \}\}s only", id="ref"),
    pytest.param('\n{{ table wavelength_table caption="A {{ valeu a b }}." }}',
                 r"p\.md:2: in the caption of .*unknown directive 'valeu'.*did you mean 'value'", id="typo"),
    pytest.param('{{ explorer pe_heatmap alt="A {{ value a }}" }}', r"p\.md:1: in the alt of .*value takes 2–3 arguments",
                 id="too-few-arguments"),
])
def test_a_directive_in_an_option_that_is_not_a_value_is_refused_naming_page_and_line(text, message):
    with pytest.raises(D.DirectiveError, match=message):
        D.parse(text, where="p.md")


def test_figure_alt_caption_and_prefix():
    d = one('![Three maps](../figures/heads_in_action.svg "Caption here")')
    assert (d.alt, d.caption, d.prefix) == ("Three maps", "Caption here", "../")


def test_lines_are_counted_and_spans_replace_exactly():
    text = "# T\n\nA {{ value a x }} and {{ value b y .1f }}.\n\n{{ table t }}\n"
    found = D.parse(text, where="p.md")
    assert [d.line for d in found] == [3, 3, 5]
    out = D.substitute(text, found, lambda d: f"<{d.keyword}:{d.name}>")
    assert out == "# T\n\nA <value:a> and <value:b>.\n\n<table:t>\n"


def test_inline_code_is_not_scanned_but_fenced_code_and_math_are():
    text = ("Write `{{ table NAME }}` for a table; \\(T = {{ value a n , }}\\) and "
            "\\(\\sqrt{d_{\\text{head}}}\\) are math.\n"
            "```\n{{ value learned_positions error_past_max }}\n```\n")
    found = D.parse(text, where="p.md")
    assert [(d.keyword, d.name) for d in found] == [("value", "a"), ("value", "learned_positions")]


def test_math_that_looks_like_a_directive_fails_loudly():
    with pytest.raises(D.DirectiveError, match="unknown directive 'x'"):
        D.parse("\\(e^{{x}}\\)", where="p.md")


@pytest.mark.parametrize("text, message", [
    pytest.param("{{ tabel wavelength_table }}", r"p.md:1: unknown directive 'tabel'.*did you mean 'table'", id="typo-table"),
    pytest.param("{{ galery }}", r"unknown directive 'galery'.*did you mean 'gallery'", id="typo-gallery"),
    pytest.param("{{ Explorer pe_heatmap }}", r"unknown directive 'Explorer'", id="capitalised-keyword"),
    pytest.param("{{ table wavelength_table }", r"p.md:1: directive not closed", id="one-closing-brace"),
    pytest.param("text\n{{ value x", r"p.md:2: directive not closed", id="unclosed-value"),
    pytest.param("see {{ table t }} inline", r"must stand on a line of its own", id="block-inline"),
    pytest.param("{{ table }}", r"table takes 1 arguments, got 0", id="table-without-name"),
    pytest.param("{{ table a b }}", r"table takes 1 arguments, got 2", id="table-two-names"),
    pytest.param("\\(T = {{ vlue a n }}\\)", r"unknown directive 'vlue'.*did you mean 'value'", id="typo-inside-math"),
    pytest.param("{{ value a }}", r"value takes 2–3 arguments, got 1", id="value-without-path"),
    pytest.param("{{ gallery only=a only=b }}", r"option 'only' is given twice", id="gallery-duplicate-option"),
    pytest.param("{{ gallery first=a }}", r"gallery takes no option 'first'", id="gallery-unknown-option"),
    pytest.param("{{ table bad-name }}", r"'bad-name' is not a figure name", id="bad-name"),
    pytest.param('{{ value a "unclosed }}', r"cannot read", id="unbalanced-quote"),
    pytest.param("![alt [x]](figures/pe_heatmap.svg)", r"figure reference not understood", id="brackets-in-alt"),
    pytest.param("![alt](figures/pe heatmap.svg)", r"figure reference not understood", id="space-in-name"),
    pytest.param("Val {{ value a b }}}.", r"p.md:1: a stray '}' after '\{\{ value a b \}\}'", id="third-brace"),
    pytest.param("Val {{{ value a b }}.", r"p.md:1: a stray '\{' before '\{\{ value a b \}\}'.*write a space",
                 id="third-opening-brace"),
    pytest.param('Some words.\n{: #Fig:x}', r"p.md:2: label not understood: '\{: #Fig:x\}'", id="attr-list-label"),
    pytest.param('![a](figures/x.svg "c"){: #Fig:x}', r"label not understood: '\{: #Fig:x\}'", id="figure-attr-label"),
    pytest.param('Text ![a](figures/x.svg "c") more.', r"p.md:1: a figure must stand on a line of its own",
                 id="figure-in-text"),
    pytest.param('| a |\n|---|\n| ![a](figures/x.svg "c") |', r"p.md:3: a figure must stand on a line of its own",
                 id="figure-in-table"),
    pytest.param('[![a](figures/x.svg "c")](https://x.org)', r"a figure must stand on a line of its own",
                 id="figure-in-link"),
    pytest.param('- ![a](figures/x.svg "c")', r"a figure must stand on a line of its own", id="figure-in-list"),
])
def test_malformed_directives_are_refused_with_page_and_line(text, message):
    with pytest.raises(D.DirectiveError, match=message):
        D.parse(text, where="p.md")


def test_math_with_backslashed_double_braces_is_not_a_directive():
    assert D.parse("\\(\\sqrt{d_{\\text{head}}}\\) and \\(x^{{\\alpha}}\\)", where="p.md") == []


# ---- directives resolved against the course's scripts (the hook's resolver, no build) ----

@pytest.fixture
def resolver():
    import figure_markdown

    def resolve(text: str):
        page = figure_markdown.Resolver("p.md", figures.scripts())
        return page.requests(D.parse(text, where="p.md"))

    return resolve


@pytest.mark.parametrize("text, message", [
    pytest.param("{{ table pe_heatmap }}", r"p.md:1: \{\{ table pe_heatmap \}\}: pe_heatmap is a figure, not a table",
                 id="figure-as-table"),
    pytest.param("![x](figures/wavelength_table.svg)", r"wavelength_table is a table, not a figure", id="table-as-figure"),
    pytest.param("{{ table wavelenght_table }}", r"unknown figure or table 'wavelenght_table'.*did you mean 'wavelength_table'",
                 id="misspelt-name"),
    pytest.param("{{ gallery only=zzz }}", r"the gallery selects no figure", id="empty-gallery"),
    pytest.param("{{ gallery chapter=atention }}", r"no chapter 'atention'; chapters: attention", id="unknown-chapter"),
    pytest.param("{{ explorer wavelength_table }}", r"wavelength_table is a table, not a figure", id="explorer-of-a-table"),
    pytest.param("{{ explorer temperature_sweep }}", r"temperature_sweep has no explorer; scripts with one: .*heads_in_action", id="figure-without-explorer"),
    pytest.param("![x](figures/pe_heatmap.svg?d_model=abc)", r"p.md:1: .*parameter 'd_model' must be an integer",
                 id="text-for-int"),
    pytest.param("![x](figures/pe_heatmap.svg?d_model=16&d_model=8)", r"parameter 'd_model' of pe_heatmap is given twice",
                 id="duplicate-parameter"),
    pytest.param("{{ value pe_heatmap?dmodel=4 min }}", r"has no parameter 'dmodel'", id="unknown-parameter"),
])
def test_page_errors_name_the_page_line_and_directive(resolver, text, message):
    from figure_markdown import FigureMarkdownError

    with pytest.raises(FigureMarkdownError, match=message):
        resolver(text)


def test_the_values_in_an_options_text_are_requested_but_not_shown():
    """A table's caption may read a variant nothing else on the site asks for: the render must be
    started with it (the build stopped: 'not among the requests this rendering was started with'),
    and, like any {{ value }}'s variant, it is not a figure a reader sees."""
    import figure_markdown

    page = figure_markdown.Resolver("p.md", figures.scripts())
    found = D.parse('{{ table wavelength_table caption="D = {{ value pe_heatmap?d_model=8 d_model }}." }}\n\n'
                    '{{ explorer pe_heatmap alt="A map of {{ value pe_heatmap?n_positions=4 n_positions }}" }}\n',
                    where="p.md")
    asked = [(r.name, r.kwargs) for r in page.requests(found)]
    assert asked == [("wavelength_table", {}), ("pe_heatmap", {"d_model": 8}), ("pe_heatmap", {}),
                     ("pe_heatmap", {"n_positions": 4})]
    assert [(r.name, r.kwargs) for r in page.requests(found, values=False)] == [("wavelength_table", {}),
                                                                               ("pe_heatmap", {})]


def test_sequences_and_text_work_from_a_page(resolver):
    (req,) = resolver("![x](figures/heads_in_action.svg?presets=Identity,Random)")
    assert req.kwargs == {"presets": ("Identity", "Random")}
    (a,), (b,) = resolver("![x](figures/bert_top_heads.svg?sentence=Cats,chase.dogs)"), \
        resolver("![x](figures/bert_top_heads.svg?sentence=Cats;chase.dogs)")
    assert a.stem != b.stem


