"""One notation on every page, lab and figure: the symbols of docs/notation.md, and no others.

The course writes the model width \\(d_{\\text{model}}\\), the head width \\(d_{\\text{head}}\\),
\\(H\\) heads, \\(H_{\\text{kv}}\\) key/value heads, the RoPE and sinusoidal frequencies
\\(\\omega_i\\) and the base \\(b\\). Papers and tutorials write \\(d_k\\), \\(d_v\\), a bare \\(d\\)
or \\(D\\) (for either width), \\(h\\) for the head count and \\(\\theta_i\\); a page that copies
one of those back in makes the same letter mean two things across the course. These tests
scan

- every page's Markdown source (docs/*.md), outside code blocks, code spans and
  ``{{ ... }}`` directives;
- the Markdown cells of every lab (docs/labs/*.py);
- what a reader sees of every figure script (figures/**/*.py): its title line and the
  strings it passes as titles, axis labels, legend labels, annotations and table headers;

and fail on the forbidden forms below, naming the file, the line and what to write instead.
The code keeps its own shape legend (``D`` = d_model, ``d`` = d_head, in mhalib/__init__.py
and on the notation page), so code blocks and code spans are not scanned.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

# ---- the forbidden forms ------------------------------------------------------------------------

#: Inside math (\( ... \) or \[ ... \]): (pattern, what to write instead).
MATH_RULES: tuple[tuple[re.Pattern, str], ...] = (
    (re.compile(r"(?<![A-Za-z\\])d_(?!\{\\text\{)"),
     r"a width is d_{\text{model}} or d_{\text{head}} (not d_k, d_v, d_model, d_{\mathrm{..}})"),
    (re.compile(r"(?<![A-Za-z\\])[dD](?![A-Za-z_])"),
     r"a bare d or D: write d_{\text{model}} (model width) or d_{\text{head}} (head width)"),
    (re.compile(r"(?<![A-Za-z\\_{^])h\s*=\s*\d+(?!\s*,)"), r"the number of heads is H, not h (h counts heads)"),
    (re.compile(r"H_\{?kv\b|H_\{\\mathrm\{kv\}\}"), r"key/value heads are H_{\text{kv}}"),
    (re.compile(r"\\theta"), r"a frequency is \omega_i (RoPE and sinusoidal alike)"),
    (re.compile(r"\\text\{base\}"), r"the base is b"),
)

#: Outside math and code, in the prose (captions and alt texts included).
TEXT_RULES: tuple[tuple[re.Pattern, str], ...] = (
    (re.compile(r"\bd_(?:k|v|ks)\b|\bd_\{[kv]\}"), r"write d_head (or \(d_{\text{head}}\)), not d_k / d_v"),
    (re.compile(r"(?<![\w.\-/?&=])[dD] ?= ?\d"), r"a width is d_model = ... or d_head = ..., not d = / D = "),
    (re.compile(r"(?<![\w.\-/?&=])h = \d"), r"the number of heads is H, not h"),
)

#: In figure scripts' visible strings (plain text or matplotlib mathtext).
FIGURE_RULES: tuple[tuple[re.Pattern, str], ...] = (
    (re.compile(r"\bd_(?:k|v|ks)\b|d_\{[kv]\}"), "head width is d_head / $d_{\\mathrm{head}}$, not d_k / d_v"),
    (re.compile(r"(?<![\w{\\])[dD] ?= ?(?:\d|\{)"), "a width is d_model = ... or d_head = ..., not d = / D = "),
    (re.compile(r"√d(?![_\w])|sqrt\(d\)"), "the scale is √d_head"),
    (re.compile(r"(?<![\w{\\'])[dD](?![\w{']|\.p\.)"), "a bare d or D: write d_model or d_head"),
    (re.compile(r"θ|\\theta|\btheta_i\b"), "a frequency is ω_i (omega_i)"),
    (re.compile(r"(?<![\w{])h = (?:\d|\{)"), "the number of heads is H, not h"),
)

#: Exceptions, each with its reason: (file name, the exact math segment or text it allows).
ALLOWED: dict[str, set[str]] = {
    # The notation page lists what papers write instead ("Often written elsewhere") and
    # explains why the course writes d_head where the Transformer paper writes d_k; the
    # DeepSeek-V2 paper writes d_c and d_h^R for the latent and RoPE-key widths.
    "notation.md": {"d", "h", "d_k", "d_v", "d_c", "d_h^R"},
}


# ---- reading the sources ------------------------------------------------------------------------

MATH = re.compile(r"\\\((.+?)\\\)|\\\[(.+?)\\\]", re.S)
FENCE = re.compile(r"^(\s*)(```|~~~).*?^\1\2[^\n]*$", re.S | re.M)
CODE_SPAN = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)", re.S)
DIRECTIVE = re.compile(r"\{\{.*?\}\}", re.S)
HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)


def _blank(match: re.Match) -> str:
    """The match replaced by spaces, keeping its newlines so that line numbers stay right."""
    return re.sub(r"[^\n]", " ", match.group(0))


def prose(markdown: str) -> str:
    """``markdown`` with code blocks, code spans, directives and HTML comments blanked out."""
    for pattern in (FENCE, HTML_COMMENT, DIRECTIVE, CODE_SPAN):
        markdown = pattern.sub(_blank, markdown)
    return markdown


DOLLAR_DISPLAY = re.compile(r"\$\$(.+?)\$\$", re.S)
DOLLAR_INLINE = re.compile(r"(?<![\\$])\$(?!\$)(.+?)(?<![\\$])\$")


def lab_markdown(source: str) -> str:
    """The Markdown cells of a jupytext ``py:percent`` lab (``# `` stripped), code cells blanked,
    code spans blanked and notebook math (``$...$``, ``$$...$$``) written as ``\\(...\\)``, ``\\[...\\]``."""
    out, in_markdown = [], False
    for line in source.split("\n"):
        if line.startswith("# %%"):
            in_markdown = "[markdown]" in line
            out.append("")
        elif in_markdown and (line.startswith("# ") or line == "#"):
            out.append(line[2:])
        else:
            out.append("")
    text = prose("\n".join(out))
    text = DOLLAR_DISPLAY.sub(lambda m: "\\[" + m.group(1) + "\\]", text)
    return DOLLAR_INLINE.sub(lambda m: "\\(" + m.group(1) + "\\)", text)


def problems(text: str, name: str = "") -> list[str]:
    """Every forbidden form in ``text`` (Markdown prose), as ``line N: found ...; hint``."""
    allowed = ALLOWED.get(name, set())
    found = []

    def line_of(pos: int) -> int:
        return text.count("\n", 0, pos) + 1

    outside = MATH.sub(_blank, text)
    for match in MATH.finditer(text):
        tex = match.group(1) if match.group(1) is not None else match.group(2)
        if tex.strip() in allowed:
            continue
        for pattern, hint in MATH_RULES:
            hit = pattern.search(tex)
            if hit:
                found.append(f"line {line_of(match.start())}: {match.group(0).strip()!r} ({hint})")
                break
        if tex.strip() == "h" and not re.search(r"\bheads?\s*$", text[:match.start()], re.I):
            found.append(f"line {line_of(match.start())}: {match.group(0)!r} (the number of heads is H)")
    for pattern, hint in TEXT_RULES:
        for hit in pattern.finditer(outside):
            if hit.group(0).strip() not in allowed:
                found.append(f"line {line_of(hit.start())}: {hit.group(0)!r} ({hint})")
    return found


def _strings(node: ast.AST) -> list[str]:
    """The text of a string constant or an f-string (its fields shown as ``{}``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        return ["".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)]
    if isinstance(node, (ast.List, ast.Tuple)):
        return [s for elt in node.elts for s in _strings(elt)]
    if isinstance(node, ast.BinOp):
        return _strings(node.left) + _strings(node.right)
    return []


#: Calls whose positional string arguments a reader sees, and keywords that hold visible text.
VISIBLE_CALLS = {"set_title", "set_xlabel", "set_ylabel", "suptitle", "text", "annotate", "markdown_table",
                 "set_label"}
VISIBLE_KEYWORDS = {"label", "title", "xlabel", "ylabel"}


def figure_strings(source: str) -> list[tuple[int, str]]:
    """(line, text) of what a reader sees of a figure script: title line and visible strings."""
    tree = ast.parse(source)
    out = []
    doc = ast.get_docstring(tree)
    if doc:
        out.append((1, doc.strip().splitlines()[0]))
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name in VISIBLE_CALLS:
            args = node.args[:1] if name == "markdown_table" else node.args
            out += [(node.lineno, s) for a in args for s in _strings(a)]
        out += [(node.lineno, s) for kw in node.keywords if kw.arg in VISIBLE_KEYWORDS for s in _strings(kw.value)]
    return out


def figure_problems(source: str) -> list[str]:
    found = []
    for line, text in figure_strings(source):
        for pattern, hint in FIGURE_RULES:
            if pattern.search(text):
                found.append(f"line {line}: {text!r} ({hint})")
                break
    return found


PAGES = sorted(DOCS.glob("*.md"))
LABS = sorted((DOCS / "labs").glob("*.py"))
FIGURES = sorted(p for p in (ROOT / "figures").glob("*/*.py") if p.parent.name != "_kit" and p.name != "__init__.py")


# ---- the checker itself can fail --------------------------------------------------------------------

@pytest.mark.parametrize("bad", [
    r"scores divided by \(\sqrt{d_k}\)",
    r"with \(d_{k} = 64\)",
    r"values of width \(d_v\)",
    r"model width \(d\) and",
    r"each \((T, D)\)",
    r"a \(d = 512\) model",
    r"\(\sqrt d\)",
    r"\(O(T^2 d)\)",
    r"\(h = 8\) heads",
    r"the \(h\) heads",
    r"\(d_model = 512\)",
    r"\(\sqrt{d_{head}}\)",
    r"\(d_{\mathrm{head}}\)",
    r"\((B, H_{kv}, S, d_{\text{head}})\)",
    r"\(\theta_i = 10000^{-2i/d_{\text{head}}}\)",
    r"\(\text{base}^{-1}\)",
    "\\[\n\\frac{q \\cdot k}{\\sqrt d}\n\\]",
    "the head width d_k of the paper",
    'a caption "Random q and k, d = 64."',
    "at D = 512)",
])
def test_the_checker_finds_each_forbidden_form(bad):
    assert problems(bad), bad


@pytest.mark.parametrize("good", [
    r"\(\sqrt{d_{\text{head}}}\) and \(d_{\text{model}} = 512\), \(4d_{\text{model}}^2\)",
    r"\((B, H_{\text{kv}}, S, d_{\text{head}})\) and \(H / H_{\text{kv}}\)",
    r"\(m_h = 2^{-8h/H}\) for \(h = 1, \dots, H\); \(\text{head}_h = A_h V_h\); head \(h\); Head \(h\) owns",
    r"\(\omega_i = b^{-2i/d_{\text{model}}}\), \(d_{\text{ff}} = 4\, d_{\text{model}}\), \(\operatorname{diag}(1, -1)\)",
    r"\(\dots\), \(\mathrm{PE}(p + k)\), \(T_{\max}\)",
    "code is exempt: `split_heads(q, H)  # (B, T, D) -> (B, H, T, d)` and `d_k = 64`",
    "```python\nd = D // H  # d_k in papers\n```",
    "{{ value pe_heatmap?d_model=4&n_positions=4 first_pair_cycles .2f round=nearest }} and figures/x.svg?d_model=4",
    "plain d_model = 512 and d_head = 64 are the code names",
])
def test_the_checker_accepts_the_course_notation(good):
    assert problems(prose(good)) == [], good


def test_the_notation_page_may_show_what_papers_write_and_nothing_else_may():
    listed = r"| \(d_{\text{head}}\) | head width | `d` | \(d_k\), \(d_v\), `head_dim` |"
    assert problems(listed, "notation.md") == []
    assert problems(listed, "attention.md")


def test_lab_markdown_is_read_and_code_cells_are_not():
    lab = ("# %% [markdown]\n# width \\(D\\)\n\n# %%\nd = D // H  # d_k\n# %% [markdown]\n# fine \\(H\\)\n"
           "# heads of width $d$, `$d_k$` is code, and $$\n# \\sqrt{d_k}\n# $$ costs $5.\n")
    text = lab_markdown(lab)
    assert [p.split(":")[0] for p in problems(text)] == ["line 2", "line 8", "line 8"]


def test_figure_checker_reads_titles_labels_and_table_headers():
    source = '''"""Why divide by sqrt(d_k): a title."""
def draw(data):
    ax.set(xlabel="d_k", title=f"d = {data['d']}")
    ax.plot([1], label="softmax(q·k / √d)")
    ax.set_title("θ = 0.5 rad")
def table(data):
    return markdown_table([f"layer (D = {data['D']})", "weights"], [], "lr")
'''
    found = figure_problems(source)
    assert [f.split(":")[0] for f in found] == ["line 1", "line 3", "line 3", "line 4", "line 5", "line 7"], found
    assert figure_problems(r'''r"""Fine: d_head and $d_{\mathrm{model}}$."""
ax.set(xlabel=r"head width $d_{\mathrm{head}}$", title="N(0, 1/d_model), dims d0-d3, 2 d.p.")''') == []


# ---- the course itself ------------------------------------------------------------------------------

@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_pages_use_the_course_notation(page):
    found = problems(prose(page.read_text(encoding="utf-8")), page.name)
    assert not found, f"docs/{page.name}: non-standard symbols (see docs/notation.md):\n  " + "\n  ".join(found)


@pytest.mark.parametrize("lab", LABS, ids=lambda p: p.name)
def test_lab_markdown_uses_the_course_notation(lab):
    found = problems(prose(lab_markdown(lab.read_text(encoding="utf-8"))), lab.name)
    assert not found, f"docs/labs/{lab.name}: non-standard symbols in Markdown cells:\n  " + "\n  ".join(found)


@pytest.mark.parametrize("script", FIGURES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_figure_labels_use_the_course_notation(script):
    found = figure_problems(script.read_text(encoding="utf-8"))
    assert not found, f"{script.relative_to(ROOT)}: non-standard symbols in visible text:\n  " + "\n  ".join(found)


def test_the_scan_covers_the_course():
    assert len(PAGES) >= 20 and len(LABS) >= 3 and len(FIGURES) >= 60
    assert "notation.md" in {p.name for p in PAGES}
