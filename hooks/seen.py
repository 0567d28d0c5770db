"""What a reader sees around each value on the built page, held to what the build read there.

hooks/claims.py reads a page's Markdown for what its sentences claim of a value ("= 0.69",
"at most 0.56", "from 0.13 to 0.56") and refuses a claim the value's rounding makes false. But
what a reader sees is decided later, by Markdown, its extensions, KaTeX and the browser, and
every adversarial pass of issue 25 (passes 87 to 103) found a construct between a sign and a
value that the Markdown-level reading skipped or misread while the rendered page showed the
sign (``\\kern``, ``\\left|``, a footnote marker, a struck word, a TeX macro). This module
closes that gap from the other end: it reads the page as built.

1. While the page is Markdown, :func:`reading` records, for each value, the signs and claim
   words the build reads before and after it (:func:`tokens` of the text :func:`claims._as_read`
   makes of the source, markup dropped: :func:`_source_text`). The record travels with the
   value's token (hooks/provenance.py) to its ``mha-value`` span as ``data-read``.
2. Once the page is HTML with its formulas rendered, :func:`check_page` takes the text a reader
   sees (:class:`_Seen`: hidden elements, KaTeX's MathML copy, scripts and struck text left
   out; a block element or a table cell ends a stretch of text), takes the same
   tokens around each span, and refuses the page where they differ from the record. Then it
   drops the ``data-read`` attributes: the published page is unchanged.

The tokens are the signs a claim rests on (:data:`_SIGN`: the equals signs, "≈", "~", "≤",
"<", "≥", ">", "≠", "±", the minus and the dashes) and the words of :data:`_WORDS` (bounds,
equalities, ranges, negations). Letters, digits, brackets and other signs are not tokens, so
markup that draws the same sign two ways (``\\le`` and "≤", ``-`` and KaTeX's "−") reads the
same, and a construct that shows a sign the build did not read, or hides one it read, does
not. Each side's window is cut where its text starts (a paragraph, a cell, a caption); the
record reaches further back in the source, so only the tokens the reader sees are compared
(:data:`COMPARED` of them, nearest first).

What the page's reading cannot read as text it reads as an unknown token, which no source
reads, so the page is refused where it stands near a value: a picture or a form's field,
markup outside the classes and attributes the site writes (:data:`_CLASSES`,
:data:`_ATTRIBUTES`: pass 104 hid "about" in a class of the site's own that clips its text),
KaTeX's boxes drawn over their neighbours (``\\mathllap``). A table's phone labels, which the
stylesheet draws before each cell, are plain texts with no sign or claim word, and so is the
header of a column that holds a value (a reader reads "Error ≤" over each of its cells). And a page
whose values lost their marks before it was drawn (a TeX macro swallowed one: pass 105) is
refused. The claim rules hold the source to an alphabet for markup too (hooks/claims.py,
``unread_markup``): this reading is the second line.

Pages: every page with a value (README, "Write a page").
"""
from __future__ import annotations

import re
import unicodedata
from html.parser import HTMLParser

import claims
import said


class SeenError(ValueError):
    """A value whose page shows a sign or a claim word around it that the build did not read."""


#: How many tokens on each side of a value are compared, nearest first; how many the record keeps.
COMPARED, KEPT = 4, 8
#: The characters a reader's side reads around a value, and the (shown) characters the record
#: reads in the source: more, so that it holds every token the reader's side can reach (a
#: directive is written longer than the number it shows).
SHOWN, SOURCE = 120, 600
#: The signs a claim rests on, each read as one form (KaTeX draws "-" as "−"; a dash or a
#: minus is one token: hooks/claims.py tells them apart, and they read the same here).
_SIGN = {**dict.fromkeys(claims._EQUALS + ("=",), "="), **dict.fromkeys("≈∼~≃≅≒≓", "≈"),
         **dict.fromkeys("-−–—‒‐‑﹣－➖˗⁻₋―", "−"), **{c: c for c in "≤<≪≲⪯≼≺≥>≫≳⪰≽≻≠±∓≰≱≮≯"}, "≨": "<", "≩": ">"}
#: The words a claim rests on: bounds, equalities, ranges, approximations and negations.
_WORDS = frozenset(
    "about above almost approx approximately around at below between beyond bounded by close equal equalling "
    "equals exactly exceed exceeding exceeds fewer from greater identical identically least less lower max "
    "maximum min minimum minus more most nearly negative never no not or over precisely roughly than through "
    "till to under until up upper within".split())
#: KaTeX's "not" glyph, drawn over the sign after it (``\\ne`` is it and "=").
_KATEX_NOT = "\ue020"
_TOKEN = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?|\d+|\S", re.S)


#: Text in the form of an HTML tag: in the source a tag, dropped; on the page, a tag shown as
#: text ("<s>", a tokenizer's start token), not a pair of signs.
_TAG_LIKE = re.compile(r"</?[A-Za-z][^<>]*>")


def tokens(text: str, *, markup: bool = True) -> list[str]:
    """The signs and claim words of ``text`` in order: of what :func:`claims._as_read` makes of
    it, where ``text`` is the page's source (``markup``), or of the text a reader sees."""
    if not markup:  # (what a reader sees: no reference or tag in it is markup)
        text = text.replace("&", "&amp;").replace("<", "&lt;")
    text = _TAG_LIKE.sub(" ", claims._as_read(text))
    text = re.sub(_KATEX_NOT + r"\s*=", "≠", text).replace(_KATEX_NOT, "¬")
    out = []
    for t in _TOKEN.findall(text):
        word = t.lower().replace("’", "'")
        if t in _SIGN:
            out.append(_SIGN[t])
        elif t == "\ufffc":
            out.append("?")  # (a picture, a field or unknown markup on the page: what it shows, the build cannot read)
        elif t == "¬" or word in _WORDS or word.endswith("n't"):
            out.append("not" if t == "¬" or word.endswith("n't") else word)
        elif t[0].isalnum() and out[-1:] != ["·"]:
            out.append("·")  # (words and numbers that claim nothing: one "·", which says something stands there)
    return out


#: Markup of the source a reader does not see as text: another directive (one number), TeX's
#: spacing with its length ("\\mkern-3mu" draws no minus), an HTML tag, a link's destination,
#: an attribute list, a TeX command's name, Markdown's escapes.
_MARKUP = re.compile(r"(?P<directive>\{\{[^{}]*\}\})"
                     r"|\\(?:[mh]?kern|[mh]?skip|[hv]space\*?)\s*(?:\{[^{}]*\}|[-+]?(?:\d+\.?\d*|\.\d+)\s*[a-z]{2})"
                     r"|</?[A-Za-z](?:[^<>\x22\x27]|\x22[^\x22]*\x22|\x27[^\x27]*\x27)*>"
                     r"|\]\([^()\s]*\)|\{:?\s*[.#][^{}]*\}|\\[A-Za-z]+|\\\\|\\(?P<escaped>[^A-Za-z\\])", re.S)


#: TeX's commands that draw a letter or a word (a Greek letter, a function's name): a word on
#: the page, as their names are not.
_TEX_LETTERS = frozenset((
    "alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa varkappa lambda mu nu xi pi varpi "
    "rho varrho sigma varsigma tau upsilon phi varphi chi psi omega digamma Gamma Delta Theta Lambda Xi Pi Sigma "
    "Upsilon Phi Psi Omega varGamma varDelta varTheta varLambda varXi varPi varSigma varUpsilon varPhi varPsi "
    "varOmega ell hbar hslash imath jmath aleph beth gimel daleth wp Re Im partial eth ln log lg exp sin cos tan cot "
    "sec csc sinh cosh tanh coth arcsin arccos arctan arg deg det dim gcd hom inf ker lim liminf limsup max min Pr "
    "sup argmax argmin").split())


#: Of those, the ones drawn as their name (the others draw one letter).
_TEX_WORDS = frozenset("ln log lg exp sin cos tan cot sec csc sinh cosh tanh coth arcsin arccos arctan arg deg det dim "
                       "gcd hom inf ker lim liminf limsup max min Pr sup argmax argmin".split())


def _source_text(text: str) -> str:
    """``text`` (Markdown, read by :func:`claims._as_read`) with :data:`_MARKUP` dropped; a
    directive is a number, a TeX command that draws a letter a letter (:data:`_TEX_LETTERS`),
    an escaped character itself."""
    def markup(m) -> str:
        if m["directive"]:
            return " 0 "
        if m[0][1:] in _TEX_LETTERS:  # (a function's name is drawn as its name: "\\max" reads "max")
            return f" {m[0][1:]} " if m[0][1:] in _TEX_WORDS else " a "
        return m["escaped"] or " "
    return _MARKUP.sub(markup, claims._as_read(text))


def reading(text: str, d) -> str:
    """What the build reads around the value directive ``d`` of ``text``: its tokens before
    (:data:`KEPT`, the last) and after (the first), and whether its format rounds it (it
    declares ``round=``), as one short ASCII string (hex), which a span's attribute and KaTeX's
    ``\\htmlData`` carry unchanged."""
    before = tokens(_source_text(claims._back(text, d.start, SOURCE)))[-KEPT:]
    after = tokens(_source_text(claims._ahead(text, d.end, SOURCE)))[:KEPT]
    # (a value its format rounds, and which way: what may be said of it, :func:`said_false`)
    rounded = {"up": "u", "down": "d", "nearest": "n"}.get(d.options.get("round"), "")
    return (" ".join(before) + "\t" + " ".join(after) + "\t" + rounded).encode("utf-8").hex()


def _decoded(record: str) -> tuple[list, list, str]:
    """A record's tokens before and after its value, and its rounding ("u" up, "d" down, "n" to
    the nearest, "" none); a damaged record raises :class:`SeenError` (no check passes on a
    record it cannot read)."""
    try:
        before, after, rounded = bytes.fromhex(record).decode("utf-8").split("\t")
    except ValueError:
        raise SeenError(f"a value's record of what the build read is damaged ({record[:40]!r})") from None
    if rounded not in ("", "u", "d", "n"):
        raise SeenError(f"a value's record of what the build read is damaged ({record[:40]!r})")
    return before.split(), after.split(), rounded


# ---- the page as a reader sees it -----------------------------------------------------------------

#: Elements whose text a reader does not see on the page, or not in the line: a ruby's
#: annotation is drawn above the text it annotates ("≤" with an "x" over it reads "≤").
_UNSEEN_TAGS = frozenset("head script style template noscript title svg math del s strike textarea select rt rp"
                         .split())
#: Classes of elements that are not shown, or whose text is not (the site's stylesheets and the
#: theme's): KaTeX's MathML copy, text for screen readers, a heading's "¶" (shown on hover), a
#: footnote's way back, the reuse row's toggle.
_UNSEEN_CLASSES = frozenset("katex-mathml md-visually-hidden sr-only visually-hidden mha-sr-only headerlink "
                            "footnote-backref mha-reuse-toggle zeroclipboard-container".split())
#: The classes a page's text may carry outside a formula or a code block: the ones Markdown, its
#: extensions and the build write, each drawn as the text it holds (their stylesheets checked
#: for generated content, hiding and moving). Any other class near a value is markup whose
#: effect on what a reader sees the build does not read: an unknown sign (pass 104: a class of
#: the site's that hides its text, "x = <span class=...>about</span> 0.56").
_CLASSES = frozenset((
    "abstract admonition admonition-title anchor-link arithmatex autorefs autorefs-internal bug danger example "
    "failure info note question quote success tip warning notice highlight language-python filename footnote "
    "footnote-ref katex katex-display md-content__inner md-typeset mha-anchor mha-appears mha-credit mha-download "
    "mha-eq mha-eq-num mha-explorer mha-explorer-data mha-explorer-static mha-explorer-ui mha-figure "
    "mha-gallery-item mha-model-text mha-num mha-png mha-print-note mha-provenance mha-ref mha-reuse "
    "mha-script-source mha-solution mha-stack mha-tests mha-value mha-zoom notation-link tabbed-alternate "
    "tabbed-block tabbed-content tabbed-labels tabbed-set").split()) | _UNSEEN_CLASSES
#: And the attributes (``style`` with only a text alignment or custom properties, a link's
#: ``data-print-url`` only as its address, which the printed page writes after it).
_ATTRIBUTES = frozenset((
    "alt aria-hidden aria-label class colspan data-background data-explorer data-png data-print-url data-prov "
    "data-read data-records data-search-exclude data-source data-src data-static-for data-tabs data-width "
    "decoding download for height hidden href id loading media open rowspan src srcset start style tabindex "
    "title type width").split())
#: Where markup is another program's own (KaTeX's, the code highlighter's): its classes draw
#: what it typesets; not checked against the lists above.
_OWN_MARKUP = frozenset("katex highlight".split())
#: KaTeX's boxes that draw their content over what stands beside it (``\\llap``, ``\\rlap``,
#: ``\\mathllap``...): "0.56\\mathllap{x \\le\\hspace{3em}}" shows "x ≤ 0.56" (pass 104).
_OVERLAPS = frozenset("llap rlap clap".split())
#: Elements that start and end a stretch of text (a paragraph, a cell, a caption; a line break
#: does not: "x =<br>0.56" is read as one sentence).
_BLOCKS = frozenset("address article aside blockquote caption dd details dialog div dl dt fieldset figcaption "
                    "figure footer form h1 h2 h3 h4 h5 h6 header hr li main nav ol p pre section summary table "
                    "tbody td tfoot th thead tr ul".split())
#: Elements that draw something no text says (an image, a form's field, a plot): a reader may
#: see a sign in it. Outside KaTeX's formulas (which draw roots and rules as SVG).
_PICTURES = frozenset("img svg picture input button select textarea object embed iframe video audio canvas meter "
                      "progress".split())
_VOID = frozenset("area base br col embed hr img input link meta param source track wbr".split())
#: Where a stretch of text ends in the text :class:`_Seen` collects.
_EDGE = said.EDGE
#: What :class:`_Seen` writes for what it cannot read as text (a picture, unknown markup): a
#: token of its own (:func:`tokens`), which no source reads.
_UNKNOWN = " \ufffc "
#: A custom property whose value is text (the phone labels of a ``mha-stack`` table, which the
#: stylesheet draws before each cell: ``--mha-col-2: 'Error'``).
_LABEL = re.compile(r"--[\w-]+\s*:([^;]*)")
#: One quoted text with no escape: what a label may be.
_PLAIN_LABEL = re.compile(r"\s*(?:\x22[^\x22\\]*\x22|\x27[^\x27\\]*\x27)\s*")


def _unread_markup(tag: str, a: dict) -> bool:
    """Whether the attributes ``a`` of an element outside KaTeX's and the highlighter's markup
    do something to what a reader sees that the build does not read (:data:`_CLASSES`,
    :data:`_ATTRIBUTES`)."""
    if set(a.get("class", "").split()) - _CLASSES or set(a) - _ATTRIBUTES:
        return True
    if "data-print-url" in a and a["data-print-url"] != a.get("href"):
        return True  # (print.css writes it after the link: "(or more)", pass 104)
    style = [part.split(":", 1)[0].strip().lower() for part in a.get("style", "").split(";") if part.strip()]
    return any(not (name == "text-align" or name.startswith("--")) for name in style)


#: What a reader reads as a claim about a rounded value from outside its own stretch of text (a
#: column's header, a row's label, a box's title): the signs and the words of a bound or of
#: exactness, which the value's declared rounding may make false. Not an approximation ("≈",
#: "about", "close to": true of a value rounded to its digits), not the minus and the dashes
#: ("Top-1", "Non-causal"), nor words that name a quantity or compare things ("Max context",
#: "Lower layers", "Time to first token", "faster than MHA", "Speed-up over MHA", "more is
#: better", "Less memory": pass 112). A negated "over" is a bound ("not over", "never over":
#: pass 115), as are "at max" and "surpass", "no worse than", "at worst" and "tops out" (pass 116).
_SAID_SIGNS = frozenset(_SIGN.values()) - {"−", "≈"}
_SAID_WORDS = re.compile(
    r"\b(?:at\s+(?:the\s+)?(?:most|least|max|min)|(?:no|not|never)\s+(?:more|less|fewer|greater|higher|lower)\s+than"
    r"|(?:no|not|never)\s+(?:over|past|higher|lower)|surpass\w*|(?:no|not|never)\s+(?:worse|better)\s+than"
    r"|at\s+(?:worst|best)|tops?\s+(?:out|at)|as\s+(?:high|low|much|little|many|few|large|small|great)\s+as"
    r"|upwards\s+of|(?:no|not|never)\s+(?:smaller|larger|bigger)\s+than|beneath|(?:go|goes|going|gone)\s+past"
    r"|(?:lower|higher|smaller|larger|bigger|greater|less|more|fewer|worse|better)\s+than(?=\s*(?:\x1f|$))"
    r"|unrounded|precise|supremum|infimum|(?:to\s+)?every\s+digit|maximal|minimal|worst\s+case"
    r"|(?:no|not|never)\s+(?:falls?|drops?|dips?|sinks?|goes|gets|rises?|climbs?|reach(?:es)?)\s+(?:to|past)"
    r"|(?:more|less|fewer|greater)\s+than|or\s+(?:more|less|fewer|above|below|higher|lower)|up\s+to"
    r"|(?:upper|lower)\s+(?:bound|limit)s?|bound(?:s|ed)?|limits?|cap(?:s|ped)?|ceiling|floor|within|exceed\w*"
    r"|above|below|under|beyond|exact\w*|precisely|equal(?:s|ling)?|identical(?:ly)?|maximum|minimum)\b", re.I)
#: The claims of :data:`_SAID_WORDS` and :data:`_SAID_SIGNS` that a value rounded up makes true (an
#: upper bound: the value shown is at least the value), and those a value rounded down makes
#: true; the rest (exactness, "=", a bound of no side, a comparison of no sure side: "no worse
#: than") no rounding makes true.
_UPPER = re.compile(r"[≤<≪≲⪯≼≺]|at (?:the )?(?:most|max)|(?:no|not|never) (?:more|greater|higher|larger|bigger|over|past)"
                    r"(?: than)?|up to|upper (?:bound|limit)s?|or (?:less|fewer|below|lower)|below|under|beneath|ceiling"
                    r"|caps?|capped|maximum|supremum|(?:less|fewer|lower|smaller) than|as (?:high|much|many|large|great) as")
_LOWER = re.compile(r"[≥>≫≳⪰≽≻]|at (?:the )?(?:least|min)|(?:no|not|never) (?:less|fewer|lower|smaller)(?: than)?"
                    r"|lower (?:bound|limit)s?|or (?:more|above|higher)|above|beyond|floor|minimum|infimum|exceed\w*"
                    r"|upwards of|(?:more|greater|higher|larger|bigger) than|as (?:low|little|few|small) as")
#: What makes the value right after it approximate ("≈ 0.56", "about 0.56"), with nothing
#: between them but space, and no negation in the three words before it: "care about: 0.56",
#: "around: 0.56", "not about 0.56" and "never goes around 0.56" are not (pass 116).
_APPROXIMATE = re.compile(
    r"(?:(?<![^\W\d_])(?:about|approx\.?|approximately|around|roughly|nearly|almost)|[≈∼~≃≅≒≓])\s*$", re.I)
_NEGATION = re.compile(r"(?:(?<![^\W\d_])(?:not|no|never|nor)|n[’']t)(?:\W+[^\W\d_]+){0,3}\W*$", re.I)
#: The names of the signs of a relation outside the alphabet (``claims._readable``): "⋜" is
#: EQUAL TO OR LESS-THAN, "⪕" SLANTED EQUAL TO OR LESS-THAN, "≂" MINUS TILDE (pass 110). Not the
#: other signs a formula in a header draws ("⋅", "⊤").
_RELATION = re.compile(r"LESS|GREATER|EQUAL|EQUIVALENT|IDENTICAL|PRECEDES|SUCCEEDS|TILDE|APPROXIMATE")


def said_false(claims_read: list[str], rounded: str) -> list[str]:
    """The claims of ``claims_read`` (:func:`_said_claims`) that the value's rounding ("u", "d",
    "n": :func:`_decoded`) may make false: a value rounded up is shown at least as large as it is,
    so "Upper bound" over it is true, as "Lower bound" is over one rounded down."""
    side = {"u": _UPPER, "d": _LOWER}.get(rounded)
    return [c for c in claims_read if side is None or not side.fullmatch(c)]


def _said_claims(said: str, *, minus: bool = False, signs: bool = True) -> list[str]:
    """The signs and claim words (:data:`_SAID_SIGNS`, :data:`_SAID_WORDS`) of ``said``, and the
    signs of a relation the tokens do not list (:data:`_RELATION`: "⋜", "⪕"); with ``minus``, a
    minus or a dash too (a phone label is drawn right before each value: "−" there is its sign);
    without ``signs``, its words only."""
    joined = re.sub(r"(?<=\w)[-‐‑](?=\w)", "", said)  # (a hyphenated word is one word: "Speed-up")
    marks = [t for t in tokens(joined, markup=False) if t in _SAID_SIGNS or t == "?" or minus and t == "−"]
    spaced = re.sub(r"(?<=\w)[-‐‑](?=\w)", " ", said)  # (and its words apart: "Upper-bound", pass 113)
    words = [" ".join(m[0].lower().split()) for m in _SAID_WORDS.finditer(spaced)]
    odd = [c for c in joined if not claims._readable(c) and _RELATION.search(unicodedata.name(c, ""))]
    return marks + words + odd if signs else words


class _Seen(HTMLParser):
    """The text of a page as a reader sees it, and where each ``mha-value`` span stands in it
    (its own text as "0", as another value's directive reads in the source)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.size = 0
        # (tag, hides, a value span, another program's markup, a box drawn over its neighbours)
        self.stack: list[tuple[str, bool, bool, bool, bool]] = []
        self.hidden = self.own = self.in_value = self.overlap = 0
        self.open_tags: dict[str, int] = {}  # (how many of each tag the stack holds)
        self.values: list[tuple[str, str, int, int]] = []  # (record, source, start, end)
        self.labels: list[str] = []  # (custom properties' texts: drawn as text)
        self._open: list[tuple[str, str, int]] = []
        self.context = said.Context()  # (what a reader reads as said of a value outside its stretch)
        self._roles: list = []  # (each open element's role in it, popped with the element)

    def _add(self, text: str) -> None:
        self.parts.append(text)
        self.size += len(text)

    def handle_starttag(self, tag, attrs):
        a = {k: v or "" for k, v in attrs}
        classes = set(a.get("class", "").split())
        if tag in _BLOCKS and not self.hidden:
            self._add(_EDGE)  # (before what the block's own markup adds: it stands in the block's text, pass 106)
        if not self.hidden:
            if tag in _PICTURES and not self.own or not self.own and _unread_markup(tag, a):
                self._add(_UNKNOWN)  # (what it draws, the build cannot read: an unknown sign, see tokens)
            self.labels += [m[1] for m in _LABEL.finditer(a.get("style", ""))]
            if tag in ("sub", "sup") or "msupsub" in classes:
                self._add(" ")  # (a script is a word of its own: "x_{\\text{max}}" reads "x max", as its source)
        hides = (tag in _UNSEEN_TAGS or "hidden" in a or bool(_UNSEEN_CLASSES & classes)
                 or bool(re.search(r"display\s*:\s*none|visibility\s*:\s*hidden", a.get("style", ""), re.I)))
        if tag in _VOID:
            if tag == "br" and not self.hidden:
                self.context.breaks.append(self.size)  # (a line's end: "Upper bound<br>For MHA ... 0.56")
            return
        self._roles.append(self.context.start(tag, a, classes, self.size))
        value = "mha-value" in classes or "data-source" in a and "data-prov" in a
        own = bool(_OWN_MARKUP & classes)
        overlap = bool(self.own and _OVERLAPS & classes)
        self.stack.append((tag, hides, value and not self.hidden, own, overlap))
        self.open_tags[tag] = self.open_tags.get(tag, 0) + 1
        self.hidden += hides
        self.own += own
        self.overlap += overlap
        if value and not self.hidden:
            self._open.append((a.get("data-read", ""), a.get("data-source", ""), self.size))
            self.context.value_at(self.size)
            self._add(" 0 ")
            self.in_value += 1

    def handle_endtag(self, tag):
        if tag in _VOID or not self.open_tags.get(tag):
            return
        while self.stack:
            t, hides, value, own, overlap = self.stack.pop()
            self.open_tags[t] -= 1
            self.hidden -= hides
            self.own -= own
            self.overlap -= overlap
            if value:
                record, source, start = self._open.pop()
                self.values.append((record, source, start, self.size))
                self.in_value -= 1
            self.context.end(self._roles.pop(), self.size)
            if t == tag:
                break
        if tag in _BLOCKS and not self.hidden:
            self._add(_EDGE)

    def handle_data(self, data):
        if self.hidden or self.in_value:
            return  # (a value's own text is its " 0 ")
        if self.overlap and data.strip() not in ("", _KATEX_NOT):
            self._add(_UNKNOWN)  # (drawn over what stands beside it; KaTeX's "not" glyph is drawn so over its sign)
        self.context.data(data)
        self._add(data)

    def text(self) -> str:
        return "".join(self.parts)


def _shown(text: str) -> str:
    """``text`` as a message quotes it: a picture named, at most 60 characters."""
    text = text.replace("\ufffc", "[a picture, a field or markup the build does not read]")
    return text if len(text) < 60 else text[:57] + "..."


#: KaTeX's MathML copy of a formula, which a reader does not see (the HTML beside it is drawn).
_MATHML = re.compile(r'<span class="katex-mathml"><math\b.*?</math></span>', re.S)


def mismatches(output: str) -> list[str]:
    """The values of ``output`` (a built page) whose tokens a reader sees (:class:`_Seen`,
    :func:`tokens`) are not the ones the build read (:func:`reading`): the nearest
    :data:`COMPARED` on each side, as many as the reader's stretch of text holds. Each as a
    sentence naming the value and both readings."""
    # (the page's article holds its text, and every value: the navigation and the footer around
    # it, a third of a page's tags, are not read)
    a, b = output.find("<article"), output.rfind("</article>")
    article = output[a:b + len("</article>")] if 0 <= a < b else output
    seen = _Seen()
    seen.feed(_MATHML.sub("", article))  # (KaTeX's MathML copy is not shown: half a formula's tags)
    seen.close()
    text, out = seen.text(), []
    for label in seen.labels:  # (drawn before each cell of its column on a phone: passes 104 and 105)
        if not _PLAIN_LABEL.fullmatch(label) or not all(c.isspace() or claims._readable(c) for c in label):
            out.append(f"a custom property {label!r} is not one plain quoted text (one string, no escape, no attr(), "
                       "the characters of the alphabet a value may stand after), "
                       "which the stylesheet may draw as text a reader reads and the build does not")
        elif claimed := _said_claims(label.strip().strip("\x22\x27"), minus=True):  # (as a header is: pass 112)
            out.append(f"a table's phone label {label!r} holds a sign or a claim word ({' '.join(claimed)}), "
                       "which a reader reads before each value of its column and the build does not")
    for record, source, start, end in seen.values:
        if not record:
            continue
        read_before, read_after, rounded = _decoded(record)
        shown_before = text[max(0, start - SHOWN - 1):start].rsplit(_EDGE, 1)[-1]
        shown_after = text[end:end + SHOWN + 1].split(_EDGE, 1)[0]
        if len(shown_before) > SHOWN:  # (cut in the text, not at its start: no word cut in two)
            shown_before = re.sub(r"^\S*\s", "", shown_before[1:])
        if len(shown_after) > SHOWN:
            shown_after = re.sub(r"\s\S*$", "", shown_after[:-1])
        before, after = tokens(shown_before, markup=False), tokens(shown_after, markup=False)
        # (a value the page itself makes approximate, "≈ 0.56", "about 0.56", is true under any label)
        near = _APPROXIMATE.search(shown_before)
        approximate = near is not None and not _NEGATION.search(shown_before[:near.start()])
        said_text, worded, own = seen.context.said_of(start, text) if rounded and not approximate else ("", "", "")
        # (its own label's words, but those the claim rules read beside it and judged: "at most 0.57")
        judged = set(read_before + read_after)
        labelled = [c for c in _said_claims(own, signs=False) if not set(c.split()) <= judged]
        claimed = said_false(_said_claims(said_text) + _said_claims(worded, signs=False) + labelled, rounded)
        said_text = " ".join(" ".join((said_text, worded, own if labelled else "")).replace(said.PART, " ").split())
        if claimed:
            out.append(f"{source}'s value, rounded, stands where {_shown(said_text)!r} is read as said of it (a table's "
                       "header, its row or the cells above it, a box's title, a section's heading, a label before "
                       "it, the words at its footnote's marker), "
                       f"with a sign or a claim word ({' '.join(claimed)}) that the build does not read with the "
                       "value: name the quantity there, and write the bound right before the value in words the "
                       "build reads ('≤', 'at most', 'up to', with round=up; '≥', 'at least', with round=down), or "
                       "mark it approximate there ('≈', 'about')")
            continue
        k, j = min(COMPARED, len(before)), min(COMPARED, len(after))
        if (k and read_before[-k:] != before[-k:]) or (j and read_after[:j] != after[:j]):
            out.append(f"{source}'s value shows as {_shown(shown_before.strip()[-60:])!r} [value] "
                       f"{_shown(shown_after.strip()[:40])!r}, whose signs and claim words ({' '.join(before[-k:]) or '-'}"
                       f" [value] {' '.join(after[:j]) or '-'}) are not the ones the build read in the page's source "
                       f"({' '.join(read_before[-k:]) or '-'} [value] {' '.join(read_after[:j]) or '-'}). Something "
                       "between the sign and the value (markup, a TeX command, an extension's syntax) changes what a "
                       "reader sees, so the build's checks of the claim read another sentence: write the sign and "
                       "the value plainly, next to each other")
    return out


def check_page(output: str, where: str, *, gathered: bool = False, expected: int = 0) -> str:
    """``output`` (a built page) without its values' ``data-read`` records, once every value
    reads as the build read it (:func:`mismatches`) and each of the ``expected`` records its
    HTML had before its formulas were drawn is still there (a TeX macro that swallows a value's
    mark would hide the value from this check: pass 105); else :class:`SeenError` naming the
    page. A page ``gathered`` from the others (the printable lecture) shows their text as they
    do, and each of them was checked: its records are dropped unread."""
    left = output.count('data-read="')
    if left < expected and not gathered:
        raise SeenError(f"{where}: {expected - left} of its {expected} values lost their mark between the page's HTML "
                        "and the page as drawn (a TeX macro or markup swallowed it), so what a reader sees around "
                        "them cannot be checked: write the formula without it")
    if not left:
        return output
    try:
        found = [] if gathered else mismatches(output)
    except SeenError as exc:
        raise SeenError(f"{where}: {exc}") from None
    if found:
        raise SeenError(f"{where}: {found[0]} (hooks/seen.py)"
                        f"{f'; and {len(found) - 1} more on this page' if len(found) > 1 else ''}")
    return re.sub(r' data-read="[0-9a-f]*"', "", output)
