"""What the prose around a ``{{ value }}`` claims about it: that it is exact, a bound, or an end of a range.

A rounded number is true to half a unit of its last digit, but the words around it can ask
more: "= 0.69" says the value is 0.69 (ln 2 is not), "at most 0.56" that it is no more (0.5634
is more), "from 0.13 to 0.56" that every value lies between (0.1267 does not). These functions
read a page's Markdown (or an alt text, a caption) for such claims; hooks/figure_markdown.py
checks each against the value's data and refuses a page whose claim the rounding makes false.
A value a claim rests on that its format rounds says which way, round=up or round=down
(:func:`declared`): the side comes from the author, and the words only check it. A sign
before such a value that a reader may take for a minus and the rule does not read as one (an
en dash, "minus") is refused (:func:`check_sign`), as is a claim on a number data() holds as
text (:func:`as_number`).

Before matching, the text around a value is read as a reader sees it (:func:`_as_read`): HTML
references decoded (``&le;``, ``&#8804;``, ``&nbsp;``), the variants of a sign made one (``⩽``,
``<=``, ``\\leqslant`` are ``≤``; ``＝`` is ``=``).

The reading is of words, so it has limits, and every adversarial pass found words it missed
("at **most**", "\\overset{!}{=}", "The exact value is", "from a (head 1) to b": pass
eighty-seven; "V is larger than every weight", "to infinite precision": pass ninety, past a
net of claim words that also refused a third of the ordinary sentences it was shown). So the
author says, for every value its format rounds, what its sentence claims (:func:`check_declared`):
round=up or round=down for a bound or a range's end, round=nearest for the value stated to its
digits. The rules below hold the words they read to that word, and two values compared with
each other ("a ≤ b") are held to their data (:func:`check_comparison`). They read a narrow,
predictable set, because a rule that reads too much refuses true sentences and asks for a
rounding that makes them false (pass sixty-eight: "1 − p" read as a range from 1, "0.69
exactly when the scores tie" as "=").

Not read by the rules (the author's round= says what they claim): "more than", "less than",
"above", "below", "over", "under", "<", ">" (a negation or
a condition turns them around); "a maximum of", "a minimum of", "a ceiling of", "max." (they
often state the extremum itself); "at best", "at worst" (which side is best depends on the
quantity); "≲", "≾", "⪯" (approximate or an order, not a bound); "bounded by" without "above"
or "below" ("bounded by 0.13 from below": pass eighty-five); "≮", "≯", "≰", "≱" as "<" and ">"; a value made approximate ("about", "roughly", "~", "≈"); words after a
value other than "or less" and "or more" ending the clause; a value listed after a bound ("at
most a and b": the list may go on with what is not one); units of more than one word (but
"per cent", "per mille") and ranges whose ends are in two units neither :data:`_UNITS` nor
:data:`_UNIT_NAMES` holds; a bound after a negation in its clause is refused, not read; "a through b"
without "from"; a number the prose writes at a range's end unless after "from" or "between"
(dashes with a number are arithmetic and names); inequalities inside a formula other than ≤
or ≥ right before the value, intervals "[a, b]", ranges split over two table columns;
round=nearest on both ends (or on the value's end, where the other is a number the prose
writes) is the author's word that two numbers are a change.

These rules read the page's source; what a reader sees is decided later (Markdown, KaTeX). The
signs and claim words they read around each value are recorded and held to the built page
(hooks/seen.py), so markup that shows a sign these rules do not read fails the build.

Pages: README ("Write a page"), and every page that states a bound, a range or an exact value.
"""
from __future__ import annotations

import bisect
import functools
import html
import numbers
import re
import unicodedata
from fractions import Fraction


class ClaimError(ValueError):
    """A claim the value's rounding makes false; the message names the page, the value and the fix."""


# ---- reading the text as a reader does -------------------------------------------------------------

#: Spellings of one sign, made one before matching (after HTML references are decoded).
_SIGNS = (("⩽", "≤"), ("⩾", "≥"), ("≦", "≤"), ("≧", "≥"), ("<=", "≤"), ("=<", "≤"), (">=", "≥"), ("＝", "="), ("﹦", "="),
          ("!=", "≠"), ("::=", "⩴"), ("=:", "≕"), ("~=", "≈"), ("=~", "≈"), ("≃", "≈"), ("≅", "≈"),
          ("꞊", "="), ("═", "="), ("⩶", "≡"),  # (look-alike equals: pass eighty-nine)
          ("⹀", "="), ("᐀", "="), ("⩦", "="), ("⊜", "="), ("〓", "="), ("﹤", "<"), ("﹥", ">"), ("˂", "<"), ("˃", ">"),
          ("ᐸ", "<"), ("ᐳ", ">"),  # (pass ninety)
          ("≒", "≈"), ("≓", "≈"),  # (approximately equal, in Japanese use: pass ninety-two)
          ("🟰", "="), ("⁼", "="), ("₌", "="),  # (pass ninety-three)
          ("<>", "≠"))  # (a programmer's "not equal": pass ninety-six)
#: TeX's commands for them (a whole command: ``\\le`` is not ``\\left``).
_TEX_SIGNS = {"leqslant": "≤", "geqslant": "≥", "leqq": "≤", "geqq": "≥", "leq": "≤", "geq": "≥", "le": "≤", "ge": "≥", "neq": "≠", "ne": "≠",
              "approx": "≈", "simeq": "≈", "sim": "≈", "equiv": "≡", "coloneqq": "≔",
              "triangleq": "≜", "eqcolon": "≕", "Coloneqq": "⩴", "preceq": "⪯", "succeq": "⪰", "lesssim": "≲",
              "gtrsim": "≳", "prec": "≺", "succ": "≻", "lt": "<", "gt": ">", "lneq": "<", "lneqq": "<",
              "gneq": ">", "gneqq": ">", "lessdot": "<", "gtrdot": ">", "eqslantless": "≤", "eqslantgtr": "≥",
              "ngtr": "≤", "nless": "≥", "preccurlyeq": "≼", "succcurlyeq": "≽", "ll": "≪", "gg": "≫", "lll": "≪",
              "ggg": "≫", "doteq": "≐",
              "coloneq": "≔", "eqqcolon": "≕", "doteqdot": "≑", "Doteq": "≑", "fallingdotseq": "≈",
              "risingdotseq": "≈", "eqcirc": "≖", "circeq": "≗", "bumpeq": "≏", "Bumpeq": "≎",
              "colonequals": "≔", "equalscolon": "≕", "coloncolonequals": "⩴"}
# (pass ninety: KaTeX draws \lt as "<"; pass ninety-three: KaTeX's aliases \colonequals and its like)
#: And its commands for a dash or a sign drawn as a minus, read as the character they draw, which
#: the minus rules read or the alphabet refuses (pass ninety-five: ``\\textendash``, ``\\ominus``).
_TEX_DRAWN = {"textendash": "–", "textemdash": "—", "textminus": "−", "relbar": "−", "Relbar": "=",
              "ominus": "⊖", "neg": "¬", "lnot": "¬", "mp": "∓", "setminus": "∖", "smallsetminus": "∖", "minuscolon": "−",
              "minuscoloncolon": "−"}
_TEX_SIGN = re.compile(r"\\(" + "|".join(sorted({**_TEX_SIGNS, **_TEX_DRAWN}, key=len, reverse=True))
                       + r")(?![A-Za-z])")


#: Characters a reader never sees: the soft hyphen, zero-width spaces and joiners, the word
#: joiner, the byte-order mark ("at\u00admost", "=\u200b0.69": pass eighty-seven).
_INVISIBLE = re.compile("[\u00ad\u200b-\u200f\u2060-\u2064\ufeff\u115f\u1160\u3164\uffa0]")  # (Hangul fillers: 103)
#: The full-width forms of ASCII, read as ASCII ("＜＝", "：", "０.５６": pass eighty-seven).
_FULL_WIDTH = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)}


#: A minus or a relation TeX gives a group of its own, with or without a command around it:
#: ``\\mathord{-}``, ``\\text{−}``, ``\\color{red}{-}``, ``{-}`` (pass ninety-one),
#: ``\\mathrel{=}``, ``\\stackrel{!}{=}``, ``\\text{≤}``, ``\\mathrel{\\le}`` (pass ninety-two).
_GROUPED_SIGN = re.compile(r"(?:\\[A-Za-z]+\s*(?:\{[^{}]*\}\s*)*?)?\{\s*([-−=≤≥<>≠≈≡≔≕≝≜⩵⩴])\s*\}")
#: TeX's ``\\char`` of a sign: ``\\char61``, ``\\char"3D``, ``\\char`=``, ``\\char"2212`` (KaTeX
#: draws the character: pass ninety-three).
_TEX_CHAR = re.compile(r"\\char\s*(?:(\d+)|\"([0-9A-Fa-f]+)|`\\?(.)|'([0-7]+))")  # (octal too: pass 109)
#: TeX's commands that draw their last argument as it is (a font, a colour, a box, a line over
#: or under it, KaTeX's HTML attributes), with the number of arguments before it: a reader reads
#: ``\\text{–}`` and ``\\textcolor{red}{\\textendash}`` as "–" (pass ninety-five).
_TEX_SHOWS = {**dict.fromkeys(("text", "textrm", "textsf", "texttt", "textnormal", "textbf", "textit", "textup", "emph",
                               "mathrm", "mathsf", "mathtt", "mathnormal", "mathbf", "mathit", "boldsymbol", "bm",
                               "mathord", "mathbin", "mathrel", "mathop", "mathopen", "mathclose", "mathpunct",
                               "mathinner", "operatorname", "mbox", "hbox", "boxed", "fbox", "underline", "overline",
                               "smash", "llap", "rlap", "clap", "mathllap", "mathrlap", "mathclap"), 0),
              **dict.fromkeys(("textcolor", "colorbox", "htmlData", "htmlClass", "htmlId", "htmlStyle", "raisebox",
                               "scalebox"), 1), "fcolorbox": 2}
_TEX_SHOWN_GROUP = re.compile(r"\\(?:" + "|".join(sorted(_TEX_SHOWS, key=len, reverse=True)) + r")(?![A-Za-z])\s*"
                              r"(?:\[[^\[\]]*\]\s*)?(?P<args>(?:\{[^{}]*\}\s*)*)\{(?P<shown>[^{}]*)\}")
#: And the ones that change how what follows looks, or draw nothing (``\\phantom{−}`` keeps a
#: minus's width, blank, to line numbers up).
_TEX_UNSEEN = re.compile(r"\\(?:[hv]?phantom\s*\{[^{}]*\}|color\s*\{[^{}]*\}|(?:bf|it|rm|sf|tt|displaystyle|textstyle"
                         r"|scriptstyle|scriptscriptstyle|tiny|small|normalsize|large|Large|LARGE|huge|Huge|strut"
                         r"|mathstrut)(?![A-Za-z]))\s*")


def _tex_shown(m: re.Match) -> str:
    """What a group of :data:`_TEX_SHOWN_GROUP` shows: its last argument, where the command
    takes as many arguments before it as it has (else the text as written)."""
    name = re.match(r"\\([A-Za-z]+)", m[0])[1]
    return m["shown"] if len(re.findall(r"\{", m["args"])) == _TEX_SHOWS[name] else m[0]


#: An HTML tag: a sign's spelling is not read across its edge ("w<sub>1</sub>= 0.56" holds
#: "=", not ">=": pass ninety-two).
_TAG = re.compile(r"(</?[A-Za-z](?:[^<>\x22\x27]|\x22[^\x22]*\x22|\x27[^\x27]*\x27)*>)")


#: What a reader does not see or reads as withdrawn: an element hidden (``hidden``, ``display:
#: none``, ``visibility: hidden``, a zero font size, a class for screen readers only), a
#: ``<template>`` or ``<noscript>``, text struck through (``<del>``, ``<s>``, ``<strike>``,
#: TeX's ``\\cancel``, ``\\sout``): pass one hundred and two ("= <span hidden>x</span> 0.69",
#: "= ~~about~~ 0.69"). Without a value directive inside: a struck value is still a value.
_ELEMENT = re.compile(r"<(?P<tag>[A-Za-z][\w-]*)(?P<attrs>(?:\s+[^\s<>=\x22\x27]+(?:\s*=\s*(?:\x22[^\x22]*\x22"
                      r"|\x27[^\x27]*\x27|[^\s<>\x22\x27]+))?)*)\s*>(?P<inner>(?:(?!\{\{)(?!</?(?P=tag)\b).)*)</(?P=tag)>",
                      re.S)
_ATTRIBUTE = re.compile(r"([^\s<>=\x22\x27]+)(?:\s*=\s*(\x22[^\x22]*\x22|\x27[^\x27]*\x27|[^\s<>\x22\x27]+))?")
_UNSEEN = re.compile(r"<(?P<whole>template|noscript|del|s|strike)\b[^<>]*>(?:(?!\{\{).)*?</(?P=whole)>"
                     r"|\\(?:cancel|bcancel|xcancel|sout)\s*\{[^{}]*\}", re.S | re.I)


def _hides(attrs: str) -> bool:
    """Whether an element with the attributes ``attrs`` hides what it holds from a reader: the
    ``hidden`` attribute, a style with ``display: none``, ``visibility: hidden`` or a zero font
    size, a class for screen readers only (a word "hidden" in another attribute's value is
    none: pass one hundred and three)."""
    for name, value in _ATTRIBUTE.findall(attrs):
        name, value = name.lower(), value.strip("\x22\x27").lower()
        if (name == "hidden" or name == "class" and {"visually-hidden", "sr-only", "md-visually-hidden"} & set(value.split())
                or name == "style" and re.search(r"display\s*:\s*none|visibility\s*:\s*hidden"
                                                 r"|font-size\s*:\s*0*\.?0*(?:[a-z%]+)?\s*(?:;|$)", value)):
            return True
    return False


def _drop_unseen(text: str) -> str:
    """``text`` without what a reader does not see or reads as withdrawn (:func:`_hides`,
    :data:`_UNSEEN`)."""
    text = _ELEMENT.sub(lambda m: "" if _hides(m["attrs"]) else m[0], text)
    return _UNSEEN.sub("", text)


def _as_read(text: str) -> str:
    """``text`` as a reader reads it: HTML references decoded (``&le;``, ``&#08804;``, ``&#x2264;``,
    ``&nbsp;``), what a reader does not see dropped (an HTML comment, a soft hyphen, a zero-width
    space: :data:`_INVISIBLE`), full-width forms read as ASCII, the spellings of a sign made one
    (:data:`_SIGNS`, :data:`_TEX_SIGNS`; TeX's ``\\not`` before a sign negates it), a minus
    Markdown escapes (``\\-``) and a sign TeX groups (:data:`_GROUPED_SIGN`) read as the sign
    shown, a TeX group read as what it shows (:data:`_TEX_SHOWN_GROUP`; :data:`_TEX_UNSEEN`
    dropped); a sign's spelling is not read across an HTML tag's edge (:data:`_TAG`)."""
    text = _INVISIBLE.sub("", re.sub(r"<!--(?:(?!-->).)*(?:-->|$)", "", html.unescape(text), flags=re.S))
    text = _drop_unseen(text)
    text = re.sub(r"\\not\s*(?:=|\\equiv\b|≡)", "≠", text.translate(_FULL_WIDTH))
    text = re.sub(r"(\\[A-Za-z]+)~", r"\1 ", text)  # TeX's tie after a command is a space, not "~" (pass 97)
    text = text.replace("\\!", "\\,")  # TeX's negative thin space, not a "!" of "!=" (hooks/seen.py found it)
    # TeX's spaces are spaces: "\\text{at}\\ \\text{most}" is "at most" (pass 108), not "at" and a command
    text = re.sub(r"\\(?:[ ,;:>]|(?:q?quad|enspace|thinspace|medspace|thickspace)(?![A-Za-z]))", " ", text)
    parts = _TAG.split(text)  # (the text between tags at even places, the tags at odd)
    for i in range(0, len(parts), 2):
        for spelling, sign in _SIGNS:
            parts[i] = parts[i].replace(spelling, sign)
    # (before a group: "\\le {-}" is "≤ -")
    text = _TEX_SIGN.sub(lambda m: _TEX_SIGNS.get(m[1]) or _TEX_DRAWN[m[1]], "".join(parts))
    text = _TEX_CHAR.sub(lambda m: chr(int(m[1]) if m[1] else int(m[2], 16) if m[2] else int(m[4], 8) if m[4]
                                        else ord(m[3])), text)
    text = _TEX_UNSEEN.sub("", text)
    for _ in range(4):  # (groups in groups: the innermost first)
        text, n = _TEX_SHOWN_GROUP.subn(_tex_shown, text)
        if not n:
            break
    return _GROUPED_SIGN.sub(r"\1", text).replace("\\-", "-")  # (a sign as shown: passes ninety-one, ninety-two)


#: What may wrap a value without changing what it says: spaces of any width, emphasis, a code
#: span's backtick, an HTML tag or comment, a formula's delimiters and TeX's spacing (``\\,``,
#: ``\\quad``, ``\\kern1mu``: a dimension, no more, pass ninety-five), a link's brackets
#: ("[{{ value }}](#fig)"), a quote's marker at the start of a line (passes sixty-four and
#: sixty-six).
_WRAP = (r"(?:[\s\u00a0\u2009\u202f*_`]|\n[ \t]*>|<!--(?:(?!-->).)*-->|</?[A-Za-z](?:[^<>\x22\x27]|\x22[^\x22]*\x22|\x27[^\x27]*\x27)*>|\\[()]|\$"
         r"|\\[,;:!> ]|\\\\|\\q?quad\b|\\[a-z]*space\b(?:\{[^{}]*\})?"
         # an opening delimiter, sized or not ("\\left|", "\\bigl\\lvert", "\\|", "\\{": pass one hundred)
         r"|\\(?:left|[bB]igg?l?)\s*(?:\\[A-Za-z]+|\\[|{]|[(\[|.])|\\[|{]"
         r"|\\(?:l?vert|l?Vert|langle|lceil|lfloor|lbrace|lbrack|lparen|lgroup)(?![A-Za-z])"
         r"|\\[mh]?(?:kern|skip)\s*[-+]?(?:\d+\.?\d*|\.\d+)\s*(?:mu|em|ex|pt|pc|in|cm|mm|bp|dd|cc|sp|px)\b"
         r"|\{\}|\[|\]\([^()\s]*\))*")  # ("\\le{}0.56": an empty group, pass ninety-seven)
#: A footnote's or a definition's marker a sign may carry: "=¹", "=<sup>1</sup>", "\\le_{1}"
#: (pass one hundred and two).
_MARKER = (r"<su[bp]\b[^<>]*>(?:(?!</su[bp]>).){0,40}</su[bp]>|[_^](?:\{[^{}]*\}|\\?\w)"
           r"|[\u00b9\u00b2\u00b3\u2070-\u209f]+")  # a footnote's or a definition's marker: ¹, <sup>1</sup>, _{1}
#: What may stand between the words of a bound or an equality ("at **most**", "at <em>most</em>", "no *more*
#: than": pass eighty-seven): spaces, emphasis, a tag.
_SP = r"(?:[\s\u00a0*_`]|</?[A-Za-z](?:[^<>\x22\x27]|\x22[^\x22]*\x22|\x27[^\x27]*\x27)*>)+"
#: A unit after the first end: one word of up to twelve letters, signs or slashes ("×", "%",
#: "ms", "tokens", "MB/s", "tokens/sec"), or "per cent", after at most one space; not a word of
#: the sentence ("is close to b", "compared to b", "KiB a step to b" are no ranges: pass
#: sixty-eight), no punctuation ("a to b, c to d" is two ranges; a sentence ends).
_NOT_A_UNIT = (r"(?!(?:is|was|are|were|be|been|close|compared|and|or|but|the|a|an|of|in|on|at|by|as|than|then|with"
               r"|from|up|down|to|through|till|until|nearly|about|roughly|almost)\b)")
_UNIT = r"(?:[\s\u00a0]?(?:per\s+cent|per\s+mille|" + _NOT_A_UNIT + r"[^\s{}\d<>`*_\\,;:.!?()\[\]]{1,12}))?"
#: The dashes that join two ends: the en dash, the figure dash, hyphens (U+2010, U+2011), the
#: wave and swung dashes, "--"; an em dash or a bar only with no space around it (with spaces
#: it is the sentence's punctuation: "at most a — b on average", pass sixty-eight).
_DASH = r"(?:[–‒‐‑〜⁓]|--|(?<!\s)[—―⸺⸻](?!\s))"


# ---- "=": an exact value -------------------------------------------------------------------------------

#: What may stand between an "=" and the value it equates without changing the sentence: as
#: :data:`_WRAP`, and an opening bracket or brace, a sign written before the value, a table's
#: cell border, a list's marker, ``\\text{``, ``\\left(`` (passes thirty-eight and forty), a
#: closing brace (``\\stackrel{\\text{def}}{=}``).
#: A TeX command around a value in a formula: any command with its arguments, opening the group
#: the value stands in (``\\text{``, ``\\textcolor{red}{``, ``\\colorbox{yellow}{``, ``\\hat{``),
#: or a switch (``\\bf ``, ``{\\large ``); the relations were made signs before (``\\le`` is ≤).
#: Pass eighty-three: the bound rule read none of them and "=" a list of some.
_TEX_WRAP = r"\\[A-Za-z]+(?:\[[^\[\]]*\])*(?:\{[^{}]*\})*(?:\{|\s|\()|\{\\[A-Za-z]+\s"  # ("\\max(": pass 100)
_BETWEEN_EQUALS = re.compile(r"(?:" + _WRAP[3:-2] + r"|[({\[}\]|:+\-−–‒‐‑－﹣➖˗⁻₋—―]|(?<![\w-])(?:minus|negative)\b|\\[\[\]]"
                             r"|" + _TEX_WRAP + r"|\\(?:left|[bB]igg?l?)[(\[.]"
                             # a footnote's marker, a reference link's label ("=[^1]", "[=][eq]"), a table's
                             # alignment row and a definition's ":" (pass ninety-nine)
                             r"|\[\^[^\]]*\]|(?<=\])\[[^\]]*\])+$", re.S)
#: What states an equality: "=" and the signs of a definition or an identity.
_EQUALS = ("=", "≔", "≡", "≝", "≜", "⩵", "≕", "⩴",  # (≜ and ⩵: pass eighty-one)
           "≗", "≛", "≞", "≑", "≙", "≍", "≣", "゠", "⩮", "⩷", "≐",  # (equals with a mark: pass ninety-two)
           "≚", "≘", "≖", "≏", "≎")  # (pass ninety-three)
#: Words that state an exact value as "=" does ("is exactly 0.69" for ln 2: pass sixty-four),
#: unless a word among the three before turns them ("not exactly", "isn't *exactly*", "roughly
#: equal to", "less than or equal to", a bound: passes sixty-six and sixty-eight).
_EQUALS_WORDS = re.compile(r"(?<![\w-])(?:exactly|precisely|identically|equals|equal" + _SP + "to|equalling|equaling"
                           r"|identical" + _SP + r"to)(?:" + _WRAP[3:-2] + r"|[,:;—–]|\([^()]{0,80}\))*$", re.I)
_TURNED = re.compile(r"n't\b|\b(?:not|never|almost|nearly|roughly|about|approximately|close|quite)\b|\bthan\s+or\b",
                     re.I)
#: After a value, words that say it is rounded: "equals 0.693 to three places".
_ROUNDED_AFTER = re.compile(_WRAP + r"(?:to|at)\s+(?:(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|a\s+few)\s+)?"
                            r"(?:decimal\s+)?(?:places|digits|decimals|significant)\b", re.I)  # (not "at both places")
#: A value before this one in the same list, "= ({{ value a }}, {{ value b }})".
_LISTED_AFTER = re.compile(r"\{\{\s*value\b[^{}]*\}\}[\s\u00a0*_`]*[,;]$")


#: A formula of the page: inside it "~" is TeX's tie, a space, not "about" (pass ninety-nine:
#: "\\(\\ln 2 =~0.69\\)" is "ln 2 = 0.69", "\\(e \\le ~0.56\\)" is "e ≤ 0.56").
_MATH = re.compile(r"\\\(.*?\\\)|\\\[.*?\\\]|\$\$.*?\$\$", re.S)


#: pymdownx.tilde's markup: "~~a~~" strikes a through, "~a~" (no space in a) sets it as a
#: subscript; the tildes are not shown (pass one hundred and one: "x = ~0.56~" is "x = ₀.₅₆").
_TILDE_MARKUP = re.compile(r"~~(?![~\s])(?P<struck>.+?)(?<![~\s])~~|(?<!~)~(?![~\s])(?P<sub>[^~\s]+)~(?!~)", re.S)


def tildes_as_read(text: str) -> str:
    """``text`` with each "~" inside a formula (:data:`_MATH`) a space, and the tildes of
    pymdownx.tilde's strike-through and subscript spaces (:data:`_TILDE_MARKUP`; a value
    directive counts as the number it shows, no space in it): the same length, so a
    directive's offsets hold. A "~" left is "about"."""
    text = _MATH.sub(lambda m: m[0].replace("~", " "), text)
    masked = re.sub(r"\{\{[^{}]*\}\}", lambda m: "0" * len(m[0]), text)  # (a directive: one word)
    out = list(text)
    for m in _TILDE_MARKUP.finditer(masked):
        inner = "struck" if m["struck"] is not None else "sub"
        whole = "{{" not in text[m.start():m.end()] and (inner == "struck" or len(m[inner]) <= 3 and m[inner].isalnum())
        for i in (range(m.start(), m.end()) if whole else (*range(m.start(), m.start(inner)),
                                                              *range(m.end(inner), m.end()))):
            out[i] = " "  # (struck words, and a marker "=~1~", are blank whole: pass one hundred and two)
    return "".join(out)


#: The end of a line and a set of tabs' next label (pymdownx.tabbed: ``=== "Model B"``).
_TAB_AFTER = re.compile(r"[^\S\n]*\n(?:[^\S\n]*\n)*[^\S\n]*={3}[+!]*[^\S\n]+[\x22\x27]")


def precedes_equals(text: str, end: int) -> bool:
    """Whether the directive ending at ``end`` of ``text`` is followed by an "=" or its like
    (:data:`_EQUALS`), with only :data:`_WRAP` between: "{{ value ... }} = ln 2" states the
    value exactly as much as "ln 2 = {{ value ... }}" (pass ninety-three)."""
    if _TAB_AFTER.match(text, end):
        return False  # (the next tab's label: "=== \"Model B\"" is markup, pass 110)
    after = _as_read(_ahead(text, end, 80))
    rest = after[re.match(r"(?:" + _MARKER + "|" + _WRAP[3:-2] + r")*", after).end():]  # ("0.69¹ =": pass 102)
    return rest.startswith(_EQUALS) and not rest.startswith("=>")  # ("==": pass ninety-five)


def follows_equals(text: str, start: int, end: int | None = None) -> bool:
    """Whether the directive at ``start`` of ``text`` is stated as exact: after an "=" (on its
    line or the line before) or its like (:data:`_EQUALS`, :data:`_EQUALS_WORDS`), with only
    :data:`_BETWEEN_EQUALS` and earlier values of the same list between: "\\(\\ln 2\\) =
    **{{ value ... }}**" and "\\(dz = \\) {{ value ... }}" state an exact value. "≈", "≠", "≤",
    "≥" (in any spelling) do not; nor does "exactly" after a value ("0.69 exactly when the
    scores tie": pass sixty-eight), nor a value followed by "to three places" (``end``: where
    the directive ends); one followed by "=" does (:func:`precedes_equals`)."""
    if end is not None and _ROUNDED_AFTER.match(text, end):
        return False  # "equals 0.693 to three places": rounded, and says so
    if end is not None and precedes_equals(text, end):
        return True  # "{{ value ... }} = ln 2" (pass ninety-three)
    words = _EQUALS_WORDS.search(_as_read(_back(text, start, 400)))
    if words:
        # a turning word right before the words, not one of another phrase ("not 1 but exactly",
        # "nearly always exactly": pass eighty-one); "less than or equal to" takes two
        words_before = re.findall(r"[\w']+", _as_read(_back(text, start, 400))[:words.start()])
        if not _TURNED.search(" ".join(words_before[-2:] if words_before[-2:-1] == ["than"] else words_before[-1:])):
            return True
    before, listed = _as_read(_back(text, start, 400)), False
    while True:
        gap = _BETWEEN_EQUALS.search(before)
        if listed and not (gap and re.search(r"[(\[]", gap.group())):
            return False  # "= a, b times more": a list only in brackets, "= (a, b)"
        before = before[:gap.start()] if gap else before
        earlier = _LISTED_AFTER.search(before)  # "= (v1, v2)": v2 is equated as v1 is
        if not earlier:
            break
        before, listed = before[:earlier.start()], True
    # "==" and "===" state it too, as a reader reads them (pass ninety-five); a line of "=" under
    # a heading (Markdown's setext underline) does not
    if (before.endswith(_EQUALS) and not before.endswith("=>")
            and not re.search(r"(?:^|\n)[ \t]*={2,}[ \t]*$", before)):
        return True
    return any(lead.rstrip().endswith(_EQUALS) and not lead.rstrip().endswith("=>")  # "x = GQA 0.56" (pass 112)
               for lead in _before_labels(before))


# ---- ranges: "from a to b", "a–b", "between a and b" ------------------------------------------------------

#: What joins the two ends of a stated range, "{{ value a }}× to {{ value b }}×",
#: "{{ value a }}–{{ value b }}", "`{{ value a }}` through `{{ value b }}`": a unit after the
#: first end, then "to", "up to", "down to", "through", "till", "until", a dash (:data:`_DASH`,
#: a hyphen with no space around it) or an ellipsis (passes fifty-four, sixty-three, sixty-four).
_RANGE_JOIN = re.compile(_WRAP + _UNIT + _WRAP + r"(?:(?:(?:up|down)\s+)?to|through|till|until|" + _DASH
                         + r"|…|\.\.\.?)" + _WRAP + r"(?:[-−](?:\*\*|\*|_|`)*)?|[^\s{}\d<>`*_\\]{0,12}-", re.S)  # (a hyphen with a space beside it is a minus)
_BETWEEN_JOIN = re.compile(_WRAP + _UNIT + _WRAP + r"(?:and|&)" + _WRAP + r"(?:[-−](?:\*\*|\*|_|`)*)?", re.S)
_BETWEEN_BEFORE = re.compile(r"\bbetween(?:\s+(?:roughly|about|some))?" + _WRAP
                             + r"(?:(?:[-−]|&minus;|&#8722;|&#x2212;)" + _WRAP + r")?$", re.I)  # ("between −a": pass 96)
#: Words before "between" that make it two values, not a range ("the difference between a and b",
#: "alternates between a and b": passes sixty-eight and seventy).
_NOT_RANGE_BETWEEN = re.compile(r"\b(?:difference|distance|gap|ratio|angle|choice|choose|chooses|correlation|trade-off"
                                r"|alternat\w*|flip\w*|switch\w*|toggl\w*|oscillat\w*|swing\w*|pick\w*)\s+$", re.I)
#: A number written in the prose at one end of a range with a value at the other, after
#: "from" or "between" ("from 0 to {{ value b }}", "between 0% and {{ value b }}", "from
#: {{ value a }} to 1": pass sixty-six); a sign, a percent and a unit are read with it ("from
#: 10% to b" is 0.1 to b: pass sixty-eight). Dashes with a number ("1 - p", "GPT-2–x",
#: "1-in-N") are arithmetic and names, not ranges.
#: (A full stop after it ends the sentence, "from a to 1.": pass ninety-six.)
_LITERAL = r"(?<![\w.,])(?P<lit>[-−]?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?%?)(?:(?=[kKM](?!\w|\.\d))|(?!\w|\.\d))"
_WORD_JOIN = r"(?:(?:(?:up|down)\s+)?to|through|till|until)"
_LITERAL_BEFORE = re.compile(r"\b(?P<word>from|between)" + _WRAP + _LITERAL + r"(?P<unit>" + _UNIT + r")" + _WRAP
                             + r"(?P<join>" + _WORD_JOIN + r"|and|&)" + _WRAP + r"(?P<minus>[-−])?$", re.S | re.I)
_LITERAL_AFTER = re.compile(r"(?P<unit>" + _UNIT + r")" + _WRAP + _WORD_JOIN + _WRAP + _LITERAL + r"(?P<unit2>"
                            + _UNIT + r")", re.S | re.I)
_FROM_BEFORE = re.compile(r"\bfrom" + _WRAP + r"(?P<minus>[-−])?$", re.I)
#: "between {{ value a }} and 1" (pass seventy-seven: the mirror of "between 0 and {{ value b }}").
_LITERAL_AND_AFTER = re.compile(r"(?P<unit>" + _UNIT + r")" + _WRAP + r"(?:and|&)" + _WRAP + _LITERAL + r"(?P<unit2>"
                                + _UNIT + r")", re.S | re.I)


class Literal:
    """A number the prose writes at one end of a range: exact, as written ("10%" is 1/10), with
    the unit written after it."""

    keyword, options = "literal", {}

    def __init__(self, text: str, unit: str = ""):
        self.raw = self.name = text
        self.args = (text,)
        self.unit = unit.strip()
        self.value = exact_number(text)  # (as written: a multiplier after it is applied by matched_percent)
        self.percent = text.endswith("%")
        if not self.percent and re.fullmatch(r"per\s*cent|percent|pct", self.unit, re.I):  # "5 per cent" is 5%
            self.value, self.percent = self.value / 100, True  # (pass seventy-nine)


#: What a reader does not see, or sees shorter than it is written: an HTML comment, a tag, a
#: link's destination, a TeX command with its arguments. A window of the page around a value
#: counts the characters it shows, not these (:func:`_back`, :func:`_ahead`).
_HIDDEN = re.compile(r"<!--.*?(?:-->|$)|</?[A-Za-z](?:[^<>\x22\x27]|\x22[^\x22]*\x22|\x27[^\x27]*\x27)*>|\]\([^()\s]*\)|\\[A-Za-z]+(?:\[[^\[\]]*\])*(?:\{[^{}]*\})+",
                     re.S)


@functools.lru_cache(maxsize=32)
def _hidden(text: str) -> tuple[list, list]:
    """The starts and the ends of the spans of ``text`` :data:`_HIDDEN` matches, in order."""
    spans = [m.span() for m in _HIDDEN.finditer(text)]
    return [a for a, _ in spans], [b for _, b in spans]


def _back(text: str, end: int, n: int) -> str:
    """The text before ``end`` that shows at least ``n`` characters besides what
    :data:`_HIDDEN` holds, starting at no point inside such a span. A window cut at a fixed
    number of written characters began inside a long comment or tag and missed the minus or the
    "=" before it (pass ninety-five: "at most −<span title=…>", "= <!-- 430 characters -->")."""
    starts, ends = _hidden(text)
    pos, need = end, n
    i = bisect.bisect_right(ends, pos) - 1  # the last hidden span that ends by pos
    while need > 0 and pos > 0:
        if i >= 0 and ends[i] >= pos - need:  # one within reach: count what shows after it, then skip it
            need -= pos - ends[i]
            pos, i = starts[i], i - 1
        else:
            pos, need = max(0, pos - need), 0
    return text[pos:end]


def _ahead(text: str, start: int, n: int) -> str:
    """The text after ``start`` that shows at least ``n`` characters besides what
    :data:`_HIDDEN` holds, ending at no point inside such a span (as :func:`_back`)."""
    starts, ends = _hidden(text)
    pos, need = start, n
    i = bisect.bisect_left(starts, pos)  # the first hidden span that starts at pos or later
    while need > 0 and pos < len(text):
        if i < len(starts) and starts[i] <= pos + need:
            need -= starts[i] - pos
            pos, i = ends[i], i + 1
        else:
            pos, need = min(len(text), pos + need), 0
    return text[start:pos]


def _before(text: str, d) -> str:
    """The text before the directive ``d`` that shows 60 characters (:func:`_back`), as a reader
    reads it (:func:`_as_read`)."""
    return _as_read(_back(text, d.start, 60))


def prose_minus(text: str, d) -> bool:
    """Whether the prose writes a minus sign before the value ``d`` (in any spelling: "−", "-",
    ``&minus;``; through emphasis, a tag or a link's bracket): one that stands after a space, an
    opening bracket or the start, not after a number, a letter, a bracket, a sign or a dash ("1
    - {{ value p }}" and "x-{{ value p }}" subtract; "a--b" and "4%-12%" join a range: pass
    seventy-one). After a space of any width, "≤", "≥", "=" or "≈" it is a minus ("≥−0.12",
    "at least\u2009−0.12"), and "−" (never a dash) after the dash that joins two ends too ("−a–−b":
    pass seventy-five)."""
    line = text[text.rfind("\n", 0, d.start) + 1:d.start]
    if re.fullmatch(r"[ \t]*(?:>[ \t]*)*[-*+][ \t]+" + _WRAP, line):
        return False  # a list's marker, "- 0.13 in float32" (pass eighty-three)
    # (a TeX group the value opens, "−\\text{ 0.56 }", as what wraps it: pass one hundred and one)
    before = re.sub(r"(?:" + _WRAP[3:-2] + "|" + _TEX_WRAP + r")*$", "", _before(text, d))
    m = re.search(r"(?P<before>.?)(?P<sign>[-−])$", before, re.S)
    if not m:
        return False
    if m["before"] == "" or m["before"].isspace() or m["before"] in "([{$*_`>≤≥=≈±":
        return True
    if re.sub(_WRAP + r"$", "", before[:m.start("sign")])[-1:] in ("", *"([{≤≥=≈±"):
        return True  # (TeX's space between the sign and the minus: "≥ \\,-0.56", pass ninety-four)
    return m["sign"] == "−" and m["before"] in "–—‒‐‑-….~⁓〜"


#: Signs a reader may take for a minus that :func:`prose_minus` does not read as one: dashes and
#: the other minus-like characters, and the words (pass seventy-three: "from –0.57 to 0.12"
#: with an en dash, "at least minus 0.56").
_OTHER_MINUS = re.compile(r"(?:(?P<sign>[–‒‐‑－﹣➖˗⁻₋⁃─﹘ー━ｰ⎯⏤一⊖∸⨪ᐨ]|[—―⸺⸻](?![\s\u00a0]))|(?<![\w-])(?P<word>minus|negative))" + _WRAP + r"$",
                          re.I)
#: What stands before a dash that joins two ends ("0.1–0.5", "{{ value a }} ms – {{ value b }}"):
#: a number or a directive, and a one-word unit.
_JOINED = re.compile(r"(?:\}\}|\d%?)[\s\u00a0]?(?:[^\s\d{}<>]{1,12})?$")


def unread_sign(text: str, d) -> str | None:
    """The sign written before the value ``d`` that a reader may take for a minus and
    :func:`prose_minus` does not read (:data:`_OTHER_MINUS`), or None: a dash that joins two ends
    is no sign, nor "minus" after a number (subtraction)."""
    before = _before(text, d)
    m = _OTHER_MINUS.search(before)
    if not m:
        return None
    prior = re.sub(_WRAP + r"$", "", before[:m.start()])
    if m["sign"] and _JOINED.search(prior) or m["word"] and re.search(r"(?:\}\}|[\d)\]])$", prior):
        return None
    return m["sign"] or m["word"]


#: The characters a value may stand right after (what wraps it aside, :data:`_WRAP`), and the
#: one before a minus there: a fixed alphabet, so that a sign no list names is refused rather
#: than read past. Passes seventy-three to ninety-four each found a look-alike of a minus or of
#: "=" that a list of look-alikes missed (➖, ᐨ, 一, ≗, 🟰, an invisible U+034F before "-"); an
#: alphabet is finite and can be read whole. ASCII, the letters of the Latin and Greek blocks
#: (:func:`_readable`), and these signs: the ones the rules read (made one by :func:`_as_read`),
#: the dashes :func:`unread_sign` reads, and the typography and mathematics of ordinary prose;
#: ``\ue000`` and ``\ue001`` hold a cross-reference's number (hooks/numbering.py).
_ALPHABET_SIGNS = frozenset("·×÷±−–—‒‐‑‘’“”„«»…←→↔⇒≤≥≠≈∼∝°²³¹‖′″∞√∈∑∏µ⟨⟩•✓£€¥\ue000\ue001"
                            + "".join(_EQUALS)
                            + "".join(_TEX_SIGNS.values()) + "".join(sign for _, sign in _SIGNS))
#: Letters of those blocks drawn as bars or as a sign: the click letters ǀ ǁ ǂ ǃ, and Ξ (≡).
_NOT_LETTERS = frozenset("ǀǁǂǃΞ")


def _readable(c: str) -> bool:
    """Whether ``c`` is in the alphabet a value may stand after (:data:`_ALPHABET_SIGNS`): a
    printable ASCII character, a listed sign, or a letter of Latin-1, Latin Extended-A or -B
    (U+00C0 to U+024F), Greek (U+0370 to U+03FF) or Cyrillic (U+0400 to U+04FF) that is not
    drawn as a sign."""
    if c in _ALPHABET_SIGNS or c.isascii() and c.isprintable():
        return True
    return (unicodedata.category(c).startswith("L") and c not in _NOT_LETTERS
            and (0x00C0 <= ord(c) <= 0x024F or 0x0370 <= ord(c) <= 0x04FF))


#: TeX's commands a value may stand right after (what each draws, a reader reads): arithmetic
#: and functions (whose claims :func:`check_sign` reads), arrows, brackets and bars, accents
#: and the Greek letters. Any other, ``\\rule`` (a bar) or one no list names, is refused: the
#: alphabet of :func:`_readable` in TeX's spelling (pass ninety-five).
_TEX_READ = frozenset((
    "times cdot div pm ln log exp sqrt frac dfrac tfrac sin cos tan max min to rightarrow leftarrow "
    "Rightarrow Leftarrow mapsto implies iff in propto colon mid vert lvert rvert Vert lVert rVert langle rangle "
    "lceil rceil lfloor rfloor lbrace rbrace lbrack rbrack cdots ldots dots left right big Big bigg Bigg bigl "
    "bigr Bigl Bigr biggl biggr Biggl Biggr hat widehat tilde widetilde bar vec dot ddot alpha beta gamma delta "
    "epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi pi rho sigma tau upsilon phi varphi "
    "chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi Omega ell infty sum prod").split())
#: A TeX command at the end of a text, with its arguments, and the group it opens.
_TEX_AT_END = re.compile(r"\\(?P<name>[A-Za-z]+)\s*(?:\[[^\[\]]*\]\s*)*(?:\{[^{}]*\}\s*)*\{?$")
#: A picture right before a value (an image, an inline SVG, a canvas): it may draw any sign.
_PICTURE = re.compile(r"(?:<(?:img|svg|picture|object|embed|canvas|iframe|video)\b[^<>]*>|!\[[^\]]*\](?:\([^()]*\)"
                      r"|\[[^\]]*\]))" + _WRAP + r"$", re.I)


def unreadable_before(text: str, d) -> str | None:
    """What stands right before the value ``d`` (what wraps it aside), or right before a minus
    there, that the build does not read: a character outside the alphabet (:func:`_readable`),
    a TeX command outside :data:`_TEX_READ`, a picture (:data:`_PICTURE`); or None."""
    before, minus = _before(text, d), False
    for _ in range(8):
        if _PICTURE.search(before):
            return "a picture (an image or an inline SVG)"
        before = re.sub(_WRAP + r"$", "", before)
        tex = _TEX_AT_END.search(before)
        if tex and tex[0].endswith("{") and tex["name"] in _TEX_SHOWS:
            before = before[:tex.start()]  # the value is what it shows ("\\text{0.56}"): what stands before it
            continue
        if tex:
            return None if tex["name"] in _TEX_READ else f"TeX's \\{tex['name']}"
        if not before:
            return None
        c = before[-1]
        if not _readable(c):
            return f"{c!r} (U+{ord(c):04X} {unicodedata.name(c, 'with no name')})"
        if c not in "-−" or minus:
            return None
        before, minus = before[:-1], True  # (a minus: what stands before it too)
    return None


#: Arithmetic right before a value: "1/p", "2×p", "2 \\times p", "\\frac{1}{p}" (pass seventy-nine).
_ARITHMETIC_BEFORE = re.compile(r"(?:[+/×÷·^]|\\(?:times|cdot|div|frac\{[^{}]*\}\{)"
                                r"|(?<![\w-])(?:twice|thrice|half|double|triple|quadruple|\w+\s+times)\s+as\s+\w+\s+as)"
                                + _WRAP + r"$", re.I)  # ("twice as large as p": pass eighty-seven)
#: And right after it: "p/2", "p²", "p^2", "p × 3", "p \\cdot 3" ("504×" alone is a unit; "*" is emphasis).
_ARITHMETIC_AFTER = re.compile(_WRAP + r"(?:[/÷·^²³]|\\(?:times|cdot|div)(?![A-Za-z])|×" + _WRAP + r"(?:[\d\\{−-]|\(\s*[\d−-]))")


#: What a page may not put near a value, because what it shows is decided after the build reads
#: the page (pass one hundred and three): a bidi control (it reorders the digits a reader sees),
#: an inline style other than custom properties (it may hide, move or recolour text: opacity,
#: a transparent colour, an offset), an element that shows nothing or script's choice (style,
#: script, dialog, datalist, canvas), a TeX colour other than a few named ones seen on both
#: themes (white, black, transparent, a hex code may vanish). The alphabet of :func:`_readable`,
#: for markup.
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")
_STYLE = re.compile(r"<[A-Za-z][\w-]*\b[^<>]*?\sstyle\s*=\s*(?:\x22([^\x22]*)\x22|\x27([^\x27]*)\x27)", re.I)
_SHOWS_NOTHING = re.compile(r"<(?:style|script|dialog|datalist|canvas)\b|\\(?:textcolor|color)\s*\{\s*(?!(?:red|blue"
                            r"|green|orange|purple|teal|magenta|brown|gr[ae]y|olive|violet|cyan)\s*\})[^{}]*\}", re.I)
#: And what a page may not hold at all where it holds a value: a TeX macro defined (``\\def\\to{=}``
#: draws "=" where the build reads an arrow), a snippet pulled in after the build read the page.
_REDEFINED = re.compile(r"\\(?:def|gdef|edef|xdef|let|newcommand|renewcommand|providecommand|DeclareMathOperator"
                        r"|DeclareRobustCommand|global)(?![A-Za-z])")
_SNIPPET = re.compile(r"^[ \t]*-{1,}8<-{1,}", re.M)
#: TeX's commands that draw a line, a bar or a box around their arguments: around nothing, a
#: fraction's bar between two spaces is drawn as a minus ("\\frac{\\;}{\\;}0.56" reads "−0.56",
#: "\\overline{\\underline{\\enspace}}" as "=": passes 104 and 105).
_DRAWING = re.compile(
    r"\\(?:[dtc]?frac|[dt]?binom|genfrac|overline|underline|underbar|widehat|widetilde|widecheck|hat|bar|vec|dot"
    r"|ddot|tilde|check|breve|acute|grave|mathring|utilde|sqrt|boxed|fbox|colorbox|fcolorbox|overbrace|underbrace"
    r"|over(?:left|right|leftright)arrow|under(?:left|right|leftright)arrow|x[a-zA-Z]*arrow|xlongequal|cancel"
    r"|bcancel|xcancel|sout|overgroup|undergroup|overlinesegment|underlinesegment|overset|underset|stackrel"
    r"|atop|over|choose|brace|brack)(?![A-Za-z])")
#: What shows nothing inside such an argument: spaces, TeX's spacing and phantoms, braces, the
#: drawing commands themselves.
_SHOWS_NO_TEXT = re.compile(r"\s|~|\\[,;:!> ]|\\[A-Za-z]*(?:space|quad|phantom|strut|kern|skip)(?![A-Za-z])\*?"
                            r"(?:\s*\{[^{}]*\}|\s*[-+]?[\d.]+\s*[a-z]{2})?|[{}]|\[[^\[\]]*\]|" + _DRAWING.pattern)


def _group(text: str, i: int) -> int:
    """The end of the brace group that opens at ``text[i]`` ("{"), its braces matched; -1 if none."""
    depth = 0
    for j in range(i, len(text)):
        if text[j] == "{" and text[j - 1:j] != "\\":
            depth += 1
        elif text[j] == "}" and text[j - 1:j] != "\\":
            depth -= 1
            if not depth:
                return j + 1
    return -1


#: Of those, the ones that stack their arguments: a bar stacked on a bar, a dot or "<" is drawn
#: as "=", "≡" or "≤" ("\\frac{-}{.}", "\\underset{-}{<}": pass 106), so each argument shows a
#: letter or a digit.
_STACKING = frozenset("frac dfrac tfrac cfrac binom dbinom tbinom genfrac overset underset stackrel atop over choose "
                      "brace brack".split())


#: Drawing commands that take two arguments, and those written between their two operands.
_TWO_ARGUMENTS = frozenset("frac dfrac tfrac cfrac binom dbinom tbinom overset underset stackrel".split())
_INFIX = frozenset("atop over choose brace brack".split())


def draws_around_nothing(text: str) -> str | None:
    """A drawing command of ``text`` (:data:`_DRAWING`) with an argument that shows no letter or
    digit (:data:`_SHOWS_NO_TEXT` aside: spaces, spacing, phantoms, other drawings): a bar under,
    over or beside a sign or nothing is drawn as another sign (a stacking one, :data:`_STACKING`,
    pass 106; an underline, pass 107); an empty group with a sub- or superscript ("{}^{-}_{-}");
    or None."""
    for m in _DRAWING.finditer(text):
        stacks = True  # (pass 107: every drawing, "\\underline{<}" draws "≤", "\\underline{-}" an "=")
        pos = re.compile(r"\s*(?:\[[^\[\]]*\]\s*)?").match(text, m.end()).end()
        unbraced = 0 if m[0][1:] in _INFIX else 2 if m[0][1:] in _TWO_ARGUMENTS else 1
        while pos < len(text) and (text[pos] == "{" or unbraced > 0):
            if text[pos] != "{":  # an argument of one token, "\\underline <" (pass 114): a letter or a digit
                token = re.compile(r"\\[A-Za-z]+|\\.|\S").match(text, pos)
                if token and not re.fullmatch(r"[^\W_]|\\" + _TEX_LETTERS, token[0]):
                    return text[m.start():token.end()]
                pos, unbraced = re.compile(r"\s*").match(text, token.end() if token else len(text)).end(), unbraced - 1
                continue
            unbraced -= 1
            end = _group(text, pos)
            if end < 0:
                break
            shown = _SHOWS_NO_TEXT.sub("", text[pos + 1:end - 1])
            letters = re.sub(r"\\(?!" + _TEX_LETTERS + r"(?![A-Za-z]))[A-Za-z]+", "", shown)  # (a sign's name is none)
            if not shown.strip() or stacks and not re.search(r"[^\W_]", letters):
                return text[m.start():end]
            pos = re.compile(r"\s*").match(text, end).end()
    m = re.search(r"\{\s*\}\s*[\^_]", " ".join(x[0] for x in _MATH.finditer(text)))
    return m[0] if m else None


#: What a paragraph with a value may not hold (passes 103 and 105), with what it does: an HTML
#: comment the browser closes at once ("<!-->": the build read on to the next "-->"), KaTeX's
#: internal macros (``\\@firstoftwo`` swallowed a value's mark), MathML written by hand (its
#: bars and spaces draw signs), a negative TeX space beyond one ``\\!`` (it moves a sign past
#: the value), text hidden, struck through or shown only without scripts (a heading's entry in
#: the table of contents, the page's description, a printed copy and a reader without
#: JavaScript show it: ``<del>``, "~~…~~", ``hidden``, ``<noscript>``, ``\\cancel``, a class for
#: screen readers only).
_NOT_NEAR_VALUES = (
    (re.compile(r"<!---?>"), "an HTML comment a browser closes at once"),
    (re.compile(r"\\@"), "a TeX internal macro"),
    (re.compile(r"<math\b", re.I), "MathML written by hand"),
    (re.compile(r"\\(?:neg(?:thick|med|thin)space(?![A-Za-z])|[mh]?(?:kern|skip)\s*-|[hm]space\*?\s*\{\s*-"
                r"|mspace\s*\{\s*-)|(?:\\!\s*){2,}"), "a negative space that may move a sign past a value"),
    (re.compile(r"<(?:del|s|strike|noscript|template)\b|<[A-Za-z][^<>]*\shidden(?=[\s=/>])|(?<!~)~~(?![~\s])|\\(?:cancel|"
                r"bcancel|xcancel|sout)(?![A-Za-z])|(?:mha-sr-only|md-visually-hidden|sr-only|visually-hidden)\b", re.I),
     "text hidden, struck through or shown only without scripts (the table of contents, the page's description, "
     "a printed copy or a reader without JavaScript shows it)"),
)


def unseen_near(text: str, d) -> str | None:
    """What stands near the value ``d`` (what a reader sees of 80 characters before it, 40
    after) whose effect on what a reader sees the build cannot read: see :data:`_BIDI`,
    :data:`_STYLE`, :data:`_SHOWS_NOTHING`; or None."""
    before, after = _back(text, d.start, 80), _ahead(text, d.end, 40)
    if _BIDI.search(before + after):
        return "a bidi control (it reorders what a reader sees)"
    for m in _STYLE.finditer(before):
        if any(not part.strip().startswith("--") for part in (m[1] or m[2] or "").split(";") if part.strip()):
            return "an inline style (it may hide, move or recolour text)"
    m = _SHOWS_NOTHING.search(before)
    return f"{m[0]!r} (what it shows the build cannot read)" if m else None


#: The TeX commands a paragraph with a value may use: the ones the rules read before a value
#: (:data:`_TEX_READ`), the signs (:data:`_TEX_SIGNS`), what draws its argument as it is
#: (:data:`_TEX_SHOWS`), spacing, brackets, and the notation of the course's pages. Passes 103 to
#: 105 found a command that changes what a reader sees in each pass (``\\def``, ``\\mathllap``,
#: ``\\@firstoftwo``, ``\\hspace{-3em}``, ``\\overline{\\enspace}``); a list of what may stand
#: there is finite, as the alphabet of characters is.
_TEX_IN_VALUE_PARAGRAPHS = (_TEX_READ | frozenset(_TEX_SIGNS) | frozenset(_TEX_DRAWN) | frozenset(_TEX_SHOWS) | frozenset((
    "( ) [ ] , ; : > { } | \\ ! quad qquad not mathcal mathbb mathit mathsf mathtt mathfrak bmod pmod mod circ odot "
    "oplus otimes top bot perp partial nabla forall exists notin subset subseteq supset cup cap setminus "
    "emptyset varnothing int iint oint lim sup inf arg det dim exp log lg sinh cosh tanh cot sec csc arcsin arccos "
    "arctan deg gcd hom ker Pr argmax argmin displaystyle textstyle tfrac dfrac binom sqrt prime ast star "
    "dagger ddagger ldots cdots vdots ddots hbar imath jmath aleph Re Im wp varpi varrho varsigma varkappa "
    "digamma uparrow downarrow updownarrow Uparrow Downarrow longrightarrow longleftarrow Longrightarrow "
    "Longleftarrow leftrightarrow Leftrightarrow longmapsto hookrightarrow rightleftharpoons kern mkern mskip hskip "
    "hspace phantom hphantom vphantom overset underset stackrel char color").split())) - frozenset((
    # (but what draws over its neighbours, moves, scales or colours: pass 104's \\mathllap)
    "llap rlap clap mathllap mathrlap mathclap smash raisebox scalebox colorbox fcolorbox htmlData htmlClass "
    "htmlId htmlStyle").split())
#: The HTML a paragraph with a value may hold, with the attributes each may carry (any other
#: tag or attribute changes what a reader sees in ways the build does not read: a ruby's
#: annotation, a form's field, a hidden or struck element, MathML, a data attribute the theme
#: draws; passes 102 to 105).
_HTML_IN_VALUE_PARAGRAPHS = {"em": set(), "strong": set(), "b": set(), "i": set(), "code": set(), "sup": set(),
                             "sub": set(), "br": set(), "a": {"href", "title"}, "abbr": {"title"}, "span": {"title"},
                             "div": {"class", "markdown", "style"}, "p": set(), "kbd": set()}
_RAW_TAG = re.compile(r"<(/?)([A-Za-z][\w-]*)((?:[^<>\x22\x27]|\x22[^\x22]*\x22|\x27[^\x27]*\x27)*)>")


def unread_markup(text: str) -> str | None:
    """A TeX command or an HTML tag or attribute of ``text`` (a paragraph with a value, code
    spans masked) outside :data:`_TEX_IN_VALUE_PARAGRAPHS` and :data:`_HTML_IN_VALUE_PARAGRAPHS`,
    described, or None."""
    math = " ".join(m[0][2:-2] for m in _MATH.finditer(re.sub(r"\{\{[^{}]*\}\}", " ", text)))  # (outside: Markdown's escapes)
    for m in re.finditer(r"\\([A-Za-z]+|[^A-Za-z\s])", math):
        if m[1] not in _TEX_IN_VALUE_PARAGRAPHS:
            return f"TeX's \\{m[1]}"
    for m in _RAW_TAG.finditer(text):
        tag = m[2].lower()
        allowed = _HTML_IN_VALUE_PARAGRAPHS.get(tag)
        if allowed is None:
            return f"the HTML element <{tag}>"
        names = {name.lower() for name, _ in _ATTRIBUTE.findall(m[3])}
        if names - allowed:
            return f"the attribute {sorted(names - allowed)[0]!r} on <{tag}>"
        if "class" in names and re.search(r"class\s*=\s*[\x22\x27]?(?![\x22\x27]?mha-stack[\x22\x27\s>])", m[3]):
            return f"a class on <{tag}> other than mha-stack"
    return None


#: An attribute list (Markdown's ``{: …}``, ``{ .class }``): only an anchor, ``{: #id }`` (or
#: ``{ .mha-print-note }``, a whole paragraph left off paper), on a page with values (pass 106: ``{: .inline }``, ``{: style=… }`` and ``{: data-linenos=… }`` laid
#: two paragraphs on one line or drew text before a value).
_ATTR_LIST = re.compile(r"(?<![{\\])\{:?[ \t]*(?:[.#][\w:.-]|[\w-]+[ \t]*=)[^{}\n]*\}(?!\})")
_ANCHOR = re.compile(r"\{:?[ \t]*(?:#[\w:.-]+|\.mha-print-note)[ \t]*\}")  # (or the home page's note, left off paper)


#: Greek letters drawn like Latin ones ("ο" like "o", "κ" like "k"); every Cyrillic letter counts too.
_LOOKALIKES = frozenset("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧαικνορυχ")


def check_page_markup(page_where: str, text: str) -> None:
    """A page with values holds, anywhere, only the HTML of :data:`_HTML_IN_VALUE_PARAGRAPHS`
    (and ``id`` on any of it) and attribute lists that are anchors (:data:`_ANCHOR`): markup
    elsewhere on the page changes how the value's paragraph is laid out (pass 106: a class
    that set two paragraphs in one row, "x =" and "0.56")."""
    prose = _MATH.sub(" ", re.sub(r"(`+)(?:(?!\1).)+\1", "``", text, flags=re.S))
    prose = re.sub(r"^([ \t]*)(`{3,}|~{3,}).*?^\1\2[ \t]*$", "", prose, flags=re.S | re.M)  # (fenced code)
    for m in _ATTR_LIST.finditer(prose):
        if not _ANCHOR.fullmatch(m[0]):
            raise ClaimError(f"{page_where}: the page holds values and the attribute list {m[0]!r}, markup the build "
                             "does not read: it may lay a paragraph out beside another or draw text before a value "
                             "(pass one hundred and six); an attribute list on such a page is an anchor, {: #name }")
    for m in re.finditer(r"[^\W\d_]+", prose):  # (code and formulas left out: "\\alpha" is a command)
        if re.search(r"[A-Za-z]", m[0]) and any(c in _LOOKALIKES or 0x0400 <= ord(c) <= 0x04FF for c in m[0]):
            raise ClaimError(f"{page_where}: the page holds values and the word {m[0]!r}, which mixes Latin letters with "
                             "Greek or Cyrillic ones that look like them: a reader reads the Latin word ('at mоst' "
                             "with a Cyrillic 'о' reads 'at most'), the build another (pass one hundred and "
                             "thirteen); write the word in one alphabet")
    for m in _RAW_TAG.finditer(prose):
        tag = m[2].lower()
        names = {name.lower() for name, _ in _ATTRIBUTE.findall(m[3])} - {"id"}
        if tag not in _HTML_IN_VALUE_PARAGRAPHS or names - _HTML_IN_VALUE_PARAGRAPHS[tag] or (
                "class" in names and not re.search(r"class\s*=\s*[\x22\x27]mha-stack[\x22\x27]", m[3])):
            raise ClaimError(f"{page_where}: the page holds values and {m[0][:60]!r}, markup the build does not read: "
                             "it may lay a value's paragraph out otherwise than the build reads it (pass one hundred "
                             "and six); on such a page the HTML is that of _HTML_IN_VALUE_PARAGRAPHS in "
                             "hooks/claims.py, with an id where an anchor is needed")


def check_page_text(page_where: str, text: str) -> None:
    """A text with values in it defines no TeX macro and pulls in no snippet (:data:`_REDEFINED`,
    :data:`_SNIPPET`): the build reads the text as written, a reader what they make of it."""
    drawn = draws_around_nothing(text)
    if drawn:
        raise ClaimError(f"{page_where}: the text draws a line or a box around nothing, or stacks signs ({drawn!r}), "
                         "where it holds values: markup the build does not read (a fraction's bar between spaces "
                         "reads as a minus, a bar over a bar as '=': passes 104 to 106); write the sign itself")
    shown_as_code = re.sub(r"(`+)(?:(?!\1).)+\1", "``", text, flags=re.S)  # (a code span shows "<s>" as text)
    invisible = _INVISIBLE.search(html.unescape(shown_as_code))
    if invisible:  # ("at&ZeroWidthSpace;most": "atmost" to the rules, "at most" on a line's break: pass 108)
        raise ClaimError(f"{page_where}: a paragraph with values holds an invisible character (U+{ord(invisible[0]):04X} "
                         f"{unicodedata.name(invisible[0], '')}), which a browser may show as a break between words the "
                         "build reads as one (pass one hundred and eight): write the words with a space")
    odd = unread_markup(shown_as_code)
    if odd:
        raise ClaimError(f"{page_where}: a paragraph with values uses {odd}, markup the build does not read: what a "
                         "reader sees of it is decided after the build reads the page (passes 102 to 105 found "
                         "such markup drawing a sign, hiding a word or moving a value); use the markup listed in "
                         "hooks/claims.py (_TEX_IN_VALUE_PARAGRAPHS, _HTML_IN_VALUE_PARAGRAPHS), or keep the "
                         "value in another paragraph")
    for pattern, what in _NOT_NEAR_VALUES:
        m = pattern.search(shown_as_code)
        if m:
            raise ClaimError(f"{page_where}: the text holds {what} ({m[0].strip()!r}) in a paragraph with values: "
                             "what a reader sees of it is not what the build reads (passes 103 to 105); write the "
                             "text plainly, or keep the values in another paragraph")
    for pattern, what in ((_REDEFINED, "defines a TeX macro"), (_SNIPPET, "pulls in a snippet")):
        m = pattern.search(text)
        if m:
            raise ClaimError(f"{page_where}: the text {what} ({m[0].strip()!r}) where it holds values: a reader sees "
                             "what the macro or snippet makes of it, which the build does not read (pass one hundred "
                             "and three); write the sign or the text itself, or keep the values in another paragraph")


#: What, written right against a value (markup between, no space), reads as more of its number:
#: a digit, a point or a comma before a digit, an exponent ("{{ value }}6" shows "0.56" for 0.5,
#: "5{{ value }}" "50.5", "{{ value }}e3" "0.5e3": pass 109).
_NUMBER_AFTER = re.compile(r"(?:</?[A-Za-z][^<>]*>|[*_`~]|\\[()])*(?:\d|[.,]\d|[eE][-+]?\d)")
_NUMBER_BEFORE = re.compile(r"(?:\d|\d[.,])(?:</?[A-Za-z][^<>]*>|[*_`~]|\\[()])*$")


def number_against(text: str, d) -> str | None:
    """A digit (or a point or a comma before one, an exponent, a letter drawn like a digit) written
    right against the value ``d``, before or after it, which a reader reads as part of its number;
    or None."""
    after = _as_read(_ahead(text, d.end, 40))
    before = _as_read(_back(text, d.start, 40))
    if _NUMBER_AFTER.match(after) or _NUMBER_BEFORE.search(before):
        return (before[-6:] + "[value]" + after[:6]).strip()
    if any(unicodedata.category(c) == "Nd" or unicodedata.numeric(c, None) is not None and "SUPERSCRIPT" not in
           unicodedata.name(c, "") and "SUBSCRIPT" not in unicodedata.name(c, "")  # (a marker, "0.69¹", is none)
           or _digit_like(c) for c in (after[:1] + before[-1:])):
        return (before[-6:] + "[value]" + after[:6]).strip()
    return None


def _digit_like(c: str) -> bool:
    """Whether the letter ``c``, right against a number, may be read as a digit of it: a letter
    outside ASCII ("Ƽ" is drawn as a 5, "З" as a 3, Greek "Ο" as a 0) or "l", "I", "O", "o"
    (pass 117). A unit or an ordinal in ASCII ("124M", "5th") is none."""
    return c.isalpha() and (not c.isascii() or c in "lIOo")


def check_minus(page_where: str, text: str, d) -> None:
    """A value after a sign a reader may take for a minus that the checks do not read as one
    (:func:`unread_sign`: an en dash, "‐", "➖", "minus", "negative") is refused wherever it
    stands: a bound, a range's end or a comparison would be read for the value without its
    sign (pass ninety-two: "at least negative 0.56", "from –0.56 to 0.9" and "≥ ‐0.56" were
    published, each false for −0.5634, with the round= an honest author writes for the words).
    Before that, a character outside the alphabet a value may stand after (:func:`unreadable_before`)
    is refused: no list of look-alikes is complete (pass ninety-four: an invisible U+034F between
    "≥ " and "-")."""
    attached = number_against(text, d)
    if attached:
        raise ClaimError(f"{page_where}: {d.name}'s value is written right against a digit or a letter drawn like one "
                         f"({attached!r}), which a reader reads as part of its number ('0.5' and '6' show '0.56', "
                         "'Ƽ' is drawn as a '5', 'l' as a '1'): put a space or a word between them, "
                         "or let data() give the whole number (pass one hundred and nine)")
    odd = unreadable_before(text, d) or unreadable_in_gap(text, d) or unseen_near(text, d)
    if odd:
        raise ClaimError(f"{page_where}: {d.name}'s value stands after {odd}, which the build does not read before "
                         "a number: a reader may take it for a sign (a minus, an '=') that no check reads. Before a "
                         "value (and before a minus there) the build reads ASCII, Latin, Greek and Cyrillic letters, "
                         "signs such as − – — ≤ ≥ ≠ ≈ ± × ÷ · → ⟨ and the equals signs (hooks/claims.py, "
                         "_ALPHABET_SIGNS), and TeX's commands for them (_TEX_READ); write the sign in them, or "
                         "rephrase so that one of them stands before the value (pass ninety-five)")
    sign = unread_sign(text, d)
    if sign:
        raise ClaimError(f"{page_where}: {d.name}'s value stands after {sign!r}, which a reader may take for a "
                         "minus and the checks of bounds, ranges and comparisons do not read as one: write the "
                         "minus as '−' (or '-'), or rephrase")


def check_sign(page_where: str, text: str, d) -> None:
    """A value a claim rests on (a bound, a range's end) with a sign before it that the claim
    reader does not read (:func:`unread_sign`) is refused: the side would be read for the value
    without its sign, and a declared side checked against that. So is a value in arithmetic
    ("1−p or less", "1/p or less", "−2×p or more": pass seventy-nine): the claim is on an
    expression of it, whose side the value's is not."""
    before = _before(text, d)
    sign = re.search(r"(.)[-−]" + _WRAP + r"$", before, re.S)  # a minus after a number, a letter, a bracket
    subtracted = bool(sign) and (re.fullmatch(r"[^\W_]|[)\]]", sign[1]) is not None
                                 or sign[1] == "}" and not before[:sign.start(1) + 1].endswith("}}"))
    if _ARITHMETIC_BEFORE.search(before) or subtracted or _ARITHMETIC_AFTER.match(_as_read(_ahead(text, d.end, 40))):
        raise ClaimError(f"{page_where}: {d.name}'s value stands in arithmetic ({before.strip()[-12:]!r} before "
                         "it, or after it), so the bound or range is on an expression of it, which this check does not read: "
                         "compute the expression in data() and state the claim on it, with round=")
    line_start = text.rfind("\n", 0, d.start) + 1
    if line_start and re.fullmatch(r"[ \t]*(?:>[ \t]*)*[-*+][ \t]+" + _WRAP, text[line_start:d.start]):
        previous = re.sub(r"^[ \t>]*", "", text[:line_start - 1].rsplit("\n", 1)[-1])
        if previous.strip() and not re.match(r"(?:[-*+]|\d+[.)])[ \t]|#", previous):
            raise ClaimError(f"{page_where}: {d.name}'s value follows '- ' at the start of a line that goes on a "
                             "paragraph (a list starts after a blank line), so the page shows 'scores - 0.56', "
                             "which a reader may take for a minus or a dash and this check for a list's marker; "
                             "write the minus next to the number ('−{{ value }}'), or start the list after a "
                             "blank line (pass ninety-one)")
    check_minus(page_where, text, d)


def check_spaced_hyphens(where, text: str, found) -> None:
    """A value after "from" or "between" that a spaced hyphen joins to the next ("from 0.13 -
    0.56") is refused: a range to a reader, a subtraction to this check (a hyphen with a space
    beside it is a minus), so neither is read (pass eighty-one). ``where(d)`` names a value."""
    found = sorted((d for d in found if d.keyword == "value"), key=lambda d: d.start)
    for a, b in zip(found, found[1:]):
        if (re.fullmatch(r"[\s\u00a0*_`]*(?:\s-|-\s|\s?−\s?)[\s\u00a0*_`]*", _as_read(text[a.end:b.start]))
                and (_FROM_BEFORE.search(_back(text, a.start, 80))
                     or _BETWEEN_BEFORE.search(_back(text, a.start, 80)))):
            raise ClaimError(f"{where(a)}: a range from {a.raw} joined to the next value by a spaced hyphen or a "
                             "minus reads to a reader as a range and to this check as a subtraction; write 'to' or an en "
                             "dash (a–b), or, for a difference, write it as one")


def ranges(text: str, found) -> list[tuple]:
    """The pairs of ends in ``text`` that state a range: two value directives of ``found`` (in
    order, with offsets in ``text``) joined by "to" or a dash, or "between ... and ...", and a
    value with a number the prose writes at the other end (a :class:`Literal`: "from 0 to
    {{ value b }}"). Not read as ranges (the rule's limits): inequalities inside a formula
    (``a \\le x \\le b``), intervals "[a, b]", and a range split over two table columns; the
    author writes their bounds with round=down/up."""
    pairs, found = [], sorted(found, key=lambda d: d.start)
    values = [d for d in found if d.keyword == "value"]
    for a, b in zip(found, found[1:]):
        if a.keyword != "value" or b.keyword != "value" or (pairs and pairs[-1][1] is a):
            continue  # (the high end of a range starts no other: "from a–b to c–d" is two ranges)
        gap = _as_read(text[a.end:b.start])
        between = _BETWEEN_BEFORE.search(text[:a.start])
        joined = _RANGE_JOIN.fullmatch(gap)
        if joined and re.search(r"\bthrough\b", gap, re.I) and not _FROM_BEFORE.search(_back(text, a.start, 80)):
            joined = None  # "stays at a through n steps": a range only "from a through b" (pass seventy)
        if joined or (_BETWEEN_JOIN.fullmatch(gap) and between
                      and not _NOT_RANGE_BETWEEN.search(_back(text, between.start(), 40))):
            pairs.append((a, b))
    paired = {id(d) for pair in pairs for d in pair}
    for d in values:
        if id(d) in paired:
            continue
        m = _LITERAL_BEFORE.search(_as_read(_back(text, d.start, 120)))
        if m and (m["join"] not in ("and", "&") or m["word"].lower() == "between"):
            pairs.append((Literal(m["lit"], m["unit"]), d))
            continue
        m = _LITERAL_AFTER.match(_as_read(_ahead(text, d.end, 120)))
        if m and _FROM_BEFORE.search(_back(text, d.start, 80)):
            pairs.append((d, Literal(m["lit"], m["unit2"] or m["unit"])))
            continue
        m = _LITERAL_AND_AFTER.match(_as_read(_ahead(text, d.end, 120)))
        between = _BETWEEN_BEFORE.search(_back(text, d.start, 80))
        if m and between and not _NOT_RANGE_BETWEEN.search(_back(text, d.start, 80)[:between.start()]):
            pairs.append((d, Literal(m["lit"], m["unit2"] or m["unit"])))
    return pairs


def exact_number(shown: str) -> Fraction | None:
    """The number ``shown`` writes, exactly ("12.3%" is 123/1000, "9,007,199,254,740,993" and
    "1_234.57" every digit of it), or None."""
    m = re.search(r"[-−]?\d[\d,_]*(?:\.\d+)?(?:[eE][-+]?\d+)?%?", shown)
    if not m:
        return None
    text = m.group(0).replace(",", "").replace("_", "").replace("−", "-")
    return Fraction(text[:-1]) / 100 if text.endswith("%") else Fraction(text)


def stands_for(value) -> tuple[Fraction, ...]:
    """The exact numbers ``value`` (a real, not a bool) stands for: an integer itself; a float
    its binary value and the shortest decimal that is that float in its own type (0.1 is
    0.1 and 0.1000000000000000055511151231257827...)."""
    if isinstance(value, Fraction):
        return (value,)
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return (value,)  # (allow=inf: ∞ compares with every number, and no number is it: pass 108)
    if isinstance(value, numbers.Integral):
        return (Fraction(int(value)),)
    short = str(value) if type(value).__module__ == "numpy" else repr(float(value))  # (float32's own shortest)
    exact = Fraction(*value.as_integer_ratio()) if hasattr(value, "as_integer_ratio") else Fraction(float(value))
    return exact, Fraction(short)


def exactly(shown: str, value) -> bool:
    """Whether ``shown`` writes ``value`` itself: the float's every binary digit, or the shortest
    decimal that is it ("0.1" for 0.1, never "0.10000000000000000555" or, for 2/3,
    "0.66666666666666663", which only round back to the same float: pass sixty-three); an
    integer every digit of it (past 2**53 too)."""
    if isinstance(value, float) and value != value:  # (nan: never shown as itself, allow= or not)
        return False
    if isinstance(value, float) and value in (float("inf"), float("-inf")):  # (allow=inf shows it as "∞": pass 108)
        return shown.strip().replace("-", "−") == ("∞" if value > 0 else "−∞")
    number = exact_number(shown)
    return number is not None and number in stands_for(value)


#: A text that begins with a number, whatever follows ("0.56", "−1,024", "1.2 MB", "0.56
#: (rounded)", "1 234 567": pass eighty-one): a number data() formatted, which no claim can be
#: checked on.
_ONE_NUMBER = re.compile(r"\s*[-−+]?\d[\d,_]*(?:\.\d*)?(?:[eE][-+]?\d+)?(?![\w.])")


def number_text(value) -> bool:
    """Whether ``value`` is a text that begins with a number (:data:`_ONE_NUMBER`); a matrix
    written out, "[[1, 2], [3, 4]]", or a name with a digit, "GPT-2", is not."""
    return isinstance(value, str) and bool(_ONE_NUMBER.match(value))


def as_number(page_where: str, d, value) -> bool:
    """Whether ``value``, the data a claim rests on, is a number to check; a text that is one
    number ("0.56", the number formatted in data(): :func:`number_text`) is refused, as it
    cannot be checked (pass seventy-three); other words are no claim."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return True
    if number_text(value):
        raise ClaimError(f"{page_where}: {d.name}'s data() holds the text {value!r} at {d.args[0]!r}, which a "
                         "claim (a bound, a range's end) rests on: give data() the number, and the page its "
                         "format and round=, so the claim can be checked")
    return False


def declared(page_where: str, d, value, shown: str, what: str, otherwise: str) -> None:
    """A value a claim rests on (a bound, a range's end) says which way it was rounded, unless it
    is shown as itself: round=up or round=down, the author's word for the side that keeps the
    sentence true. The side the build reads from the words (:func:`bounds`, :func:`ranges`,
    :func:`prose_minus`) is a guess, and each pass found words it guessed wrong ("at least
    &minus;a", "4%-12%", "90% to 12.4 per cent"): a value rounded to nearest that happened to
    land on the guessed side was published. With the side declared, a false claim needs the
    author and the reader both wrong the same way; where they disagree, the build says so
    (:func:`check_bound`, :func:`check_range`). ``what`` names the claim, ``otherwise`` the
    other way out."""
    if d.options.get("round") in ("up", "down") or exactly(shown, value):
        return
    given = f"round={d.options['round']}" if d.options.get("round") else "no round="
    raise ClaimError(
        f"{page_where}: {d.name}'s data() holds {value!r} at {d.args[0]!r}, shown as {shown.strip()!r}, read as "
        f"{what}, with {given}: a value a claim rests on says which way it is rounded; write round=up where the "
        "sentence needs the number shown to be no less than the value (an upper bound, a range's high end) or "
        "round=down where no more (a lower bound, a range's low end), a minus written before it turning the "
        f"side; {otherwise}")


def bounded_range(text: str, d) -> bool:
    """Whether the range whose first end is ``d`` stands after bound words the rules read ("up
    to a–b", "at most a to b", "≤ a–b"): its ends are then bounds, rounded outward, never a
    change (pass ninety-seven: "speedups of up to 1.23–4.57×" for 4.5734, both round=nearest)."""
    return not isinstance(d, Literal) and _side_before(_back(text, d.start, 400)) in ("up", "down")


def check_range(page_where: str, low, high, *, where_high: str | None = None, bounded: bool = False) -> None:
    """A range, "from 7.88× to 504×" or "from 0.87 down to 0.13", holds every value it summarises
    only if its ends are rounded outward: its smaller end never reads above its value, its
    larger never below (both rounded to nearest, 7.877 read "7.88" and 504.12 read "504": pass
    fifty-one; a falling range: pass sixty-three; two ends of one value, "between 0.87 and 0.87" for
    0.874 twice, the first the low end). Two values that are a change from before
    to after, not a range, say so with round=nearest on both. ``low`` and ``high`` are
    (directive, value, shown) of the first and the second end (a :class:`Literal` shows
    itself), with a fourth item True where the prose writes a minus before the value (the end is
    −value, and the value is rounded the other way); ``page_where`` names the first,
    ``where_high`` the second (default: the first)."""
    (da, va, sa, *na), (db, vb, sb, *nb) = low, high
    real = [as_number(page_where if d is da else where_high or page_where, d, v) for d, v in ((da, va), (db, vb))]
    if not all(real):
        return  # words
    marked = [d.options.get("round") == "nearest" for d in (da, db) if not isinstance(d, Literal)]
    if marked and all(marked) and bounded:
        raise ClaimError(f"{page_where}: the range {sa.strip()} to {sb.strip()} stands after words of a bound ('up "
                         "to', 'at most', '≤'), so its ends are bounds, not a change from before to after: round "
                         "them outward, round=down on the low end and round=up on the high end (pass ninety-seven)")
    if marked and all(marked):
        return  # a change ("the loss rises from 0.40 to 1.08", "falls from 2.31 to 0.52", "from 0 to 0.84"), marked as one
    # each value as the decimal it stands for (its shortest repr, as bound() rounds it: 0.123 is
    # 0.123, not the float's 0.12299999999999999822), the shown text as the decimal it writes
    # (12.3% is 123/1000, not float 12.3 / 100 = 0.12300000000000001: pass fifty-four)
    for d, value, shown, smaller, negated in ((da, va, sa, va <= vb, na == [True]), (db, vb, sb, vb < va, nb == [True])):
        if isinstance(d, Literal):  # (in the text's order)
            continue
        declared(page_where if d is da else where_high or page_where, d, value, shown,
                 f"the {'low' if smaller else 'high'} end of a range ({sa.strip()} to {sb.strip()})",
                 "or, where the two numbers are no range (a change from before to after, odds, a mapping), "
                 "round=nearest on both")
        number, exact = exact_number(shown), stands_for(value)[-1]
        fix = "round=down" if smaller != negated else "round=up"
        if number is not None and (number > exact if smaller else number < exact):
            raise ClaimError(
                f"{page_where if d is da else where_high or page_where}: {d.name}'s data() holds "
                f"{-value if negated else value!r} at "
                f"{d.args[0]!r}, shown as {shown.strip()!r} at the {'low' if smaller else 'high'} end of a range "
                f"({sa.strip()} to {sb.strip()}, read as {_as_read_end(da, va, sa)} to {_as_read_end(db, vb, sb)}): "
                "a range holds the values "
                f"it states only if its ends are rounded outward; if that is what it says, write {fix}; if not, "
                "the check misreads it (hooks/claims.py lists what it reads): rephrase it (or, where the two "
                "numbers are no range (a change from before to after, odds, a mapping), round=nearest on both)")


def _as_read_end(d, value, shown: str) -> str:
    """A range's end as the check reads it: a value as shown (its sign included), a number the
    prose writes as the number it was taken for ("5‰" beside a percentage: 0.005)."""
    return f"{float(value):g}" if isinstance(d, Literal) else shown.strip()


#: Units a range's two ends may be written in: a range must give both ends in one of them.
_UNITS = ("B", "KB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB", "s", "ms", "µs", "us", "ns", "min", "h",
          "%", "×", "x", "FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP", "GB/s", "TB/s", "tokens/s")
_UNIT_AFTER = re.compile(r"[\s\u00a0]*(" + "|".join(re.escape(u) for u in sorted(_UNITS, key=len, reverse=True))
                         + r")(?![\w/])")


#: Other spellings of units, each with the one it is (pass seventy-seven: "from 2 seconds to 1500
#: ms", "from 5‰ to 1.3%" were compared as bare numbers).
_UNIT_NAMES = {**{w: "s" for w in ("sec", "secs", "second", "seconds")},
               **{w: "ms" for w in ("msec", "millisecond", "milliseconds")},
               **{w: "µs" for w in ("us", "microsecond", "microseconds")}, **{w: "ns" for w in ("nanosecond", "nanoseconds")},
               **{w: "min" for w in ("mins", "minute", "minutes")}, **{w: "h" for w in ("hr", "hrs", "hour", "hours")},
               "day": "d", "days": "d", "‰": "‰", "‱": "‱", "bp": "‱", "bps": "‱", "basis": "‱", "mille": "‰",
               "x": "×", "per cent": "%", "percent": "%", "pct": "%"}
_NAMED_UNIT_AFTER = re.compile(r"[\s\u00a0]*(per\s+cent|per\s+mille|" + "|".join(
    re.escape(u) for u in sorted(_UNIT_NAMES, key=len, reverse=True)) + r")(?![\w/])", re.I)


def _unit_name(word: str) -> str:
    """The unit ``word`` writes, one name for its spellings ("seconds" is "s", "per cent" "%")."""
    word = re.sub(r"\s+", " ", word)
    return _UNIT_NAMES.get(word, _UNIT_NAMES.get(word.lower(), "‰" if word.lower() == "per mille" else word))


def one_unit(where: str, text: str, a, b, shown_a=lambda: "", shown_b=lambda: "") -> None:
    """A range whose ends are written in two units ("from 4.6 ms to 1.2 s", "from 2 seconds to
    1500 ms", "from 5‰ to 1.3%") cannot be checked by its numbers: refused, naming the two
    (passes sixty-four and seventy-seven). A value's unit is the one written after it, or "%"
    where its format writes one (``shown_a()``, ``shown_b()``: its text, asked for only then); a
    written end's, the one after it."""
    def unit(d, shown):
        if isinstance(d, Literal):
            if d.percent:
                return "%"
            known = d.unit and (_UNIT_AFTER.fullmatch(" " + d.unit) or _NAMED_UNIT_AFTER.fullmatch(" " + d.unit))
            return _unit_name(known[1]) if known else None
        known = _UNIT_AFTER.match(text, d.end) or _NAMED_UNIT_AFTER.match(text, d.end)
        return _unit_name(known[1]) if known else ("%" if shown().strip().endswith("%") else None)

    first, second = unit(a, shown_a), unit(b, shown_b)
    if first and second and first != second:
        raise ClaimError(f"{where}: a range from {a.raw} ({first}) to {b.raw} ({second}) gives its ends in "
                         "two units; write both in one (a range's ends are checked as numbers of one unit)")


# ---- bounds: "at least a", "at most b", "b or less" ---------------------------------------------------------

#: Words before a value that make it a bound, and the side the value must be rounded to: a
#: lower bound ("at least 0.12": the quantity is that much or more) never reads above its value,
#: an upper bound ("at most", "up to", "within", "as low as", "≤": it is that much or less)
#: never below (pass sixty-three: "at least 0.13 and at most 0.56" for 0.1267 and 0.5634 was
#: false twice). Only words that state the size of the value itself: "more than", "above",
#: "below", "<" and their like turn around in a negation or a condition ("no head scores above
#: 0.09" is an upper bound, "scores above 11.09 overflow" a threshold), so the page says which
#: with round=. "Up to" after a verb ("add up to", "rounded up to") states a result, not a
#: bound (passes sixty-four and sixty-six).
_LOWER_WORDS = (r"bounded\s+below\s+by|"
                r"at\s+(?:the\s+)?(?:very\s+)?least|at\s+minimum|no\s+(?:less|fewer|lower|smaller)\s+than"
                r"|not\s+(?:less|fewer|lower|smaller)\s+than|upwards?\s+of"
                r"|as\s+(?:high|many|much|large)\s+as|never\s+(?:falls?|drops?|goes)\s+below")
_UPPER_WORDS = (r"at\s+(?:the\s+)?(?:very\s+)?most|at\s+maximum|(?:no|not|never)\s+(?:more|greater|higher|larger)\s+than"
                r"|within|capped\s+at"
                r"|never\s+exceeds?|(?:does|do|did)\s+not\s+exceed|(?:doesn't|don't|didn't)\s+exceed"
                r"|(?:not|never)\s+exceeding|bounded\s+above\s+by"
                r"|as\s+(?:low|few|little|small)\s+as|up\s+to")
_VERB_UP = re.compile(r"(?:add|sum|total|come|came|amount|round|scale|lead|go|went|count|move|step|build|built"
                      r"|work|pile|make|made|fill|power|ramp|warm|heat|speed|sped|rise|rose|risen|climb|grow|grew"
                      r"|jump|peak|shoot|shot|soar|surge|run|ran|increas|reach|extend|spike|expand|stretch|swell"
                      r"|bounc|creep|crept|drift|inch|mount|balloon|escalat|tick|edge|grown)\w*(?<!ups)\s+$",
                      re.I)  # (pass 87; "speedups up to": a noun, pass 97)
#: What may stand between the bound and its value: as :data:`_WRAP`, and punctuation, a
#: parenthesis ("the error is, at most, 0.56", "at most (over all heads) 0.56"), a "±".
_BOUND_GAP = r"(?:" + _WRAP[3:-2] + r"|[,:;—–±]|\([^()]{0,80}\)|" + _TEX_WRAP + r")*"
_BOUND_BEFORE = re.compile(r"(?:(?<![\w-])(?P<lower>" + _LOWER_WORDS.replace(r"\s+", _SP) + r")|(?P<lower_sign>≥)"
                           r"|(?<![\w-])(?P<upper>" + _UPPER_WORDS.replace(r"\s+", _SP) + r")|(?P<upper_sign>≤))" + _BOUND_GAP
                           + r"(?:[-−]" + _BOUND_GAP + r")?$",  # ("≤ −\\text{ 0.56 }": pass one hundred and one)
                           re.S | re.I)
#: Words right after a value (or its unit) that make it a bound, ending the clause: "0.051 or
#: less.", "0.39 or more," (not "or more precisely", "more or less evenly", "at least in the
#: first head": pass sixty-eight).
_BOUND_AFTER = re.compile(r"(?:[\s\u00a0]*(?:" + "|".join(re.escape(u) for u in sorted(
                          set(_UNITS) | {"nats", "bits", "tokens", "heads", "steps", "positions", "layers"},
                          key=len, reverse=True)) + r"))?" + _WRAP
                          + r"or" + _SP + r"(?:(?P<upper>less|fewer|lower|smaller)|(?P<lower>more|greater|higher|larger))"
                          + r"(?=[\s\u00a0*_`]*(?:[.,;:)!?]|$))", re.S | re.I)
#: Words that make what follows approximate, not a bound.
_APPROXIMATE = re.compile(r"(?:\b(?:about|around|roughly|approximately|nearly|almost|some|circa)|\b(?:approx|ca)\.|[≈~])"
                          + _BOUND_GAP + "$",
                          re.I)


#: A negation in the sentence before a bound's words: "no head scores as high as", "not within",
#: "never as many as", "isn't at most" turn the bound around (pass seventy-seven), also across
#: commas and brackets (pass eighty-three).
_NEGATION = re.compile(r"\b(?:not|never|nor|without|hardly|barely|cannot|few|rarely|seldom|fails?\s+to|failed\s+to)\b"
                       r"|n't\b", re.I)
#: A negation of the sentence's subject ("No head, in any layer, ...", "None of the heads ...",
#: "Neither A nor B ..."), which reaches the bound across asides (pass eighty-three).
_NO_SUBJECT = re.compile(r"\b(?:no|none|neither|nobody|nothing|not\s+(?:every|all|each|any))\b", re.I)


def _side_before(before: str) -> str | None:
    """The side of the bound the text ``before`` a value states, None, or "negated" where a
    negation turns it around: "not", "never", "cannot", "few" and their like in its clause
    (:data:`_NEGATION`, up to twelve words before the bound's words), or "no", "none", "neither" anywhere in its sentence
    (:data:`_NO_SUBJECT`): refused by :func:`check_bound`, never guessed."""
    before = _as_read(before)
    if _APPROXIMATE.search(before):
        return None
    m = _BOUND_BEFORE.search(before)
    if not m or (m["upper"] and re.match(r"up\s", m["upper"], re.I) and _VERB_UP.search(before[:m.start()])):
        return None
    if re.search(r"(?<![\w-])(?:almost|nearly|roughly|about|approximately|around|close\s+to|not\s+quite)" + _SP + "$",
                 before[:m.start()], re.I):
        return None  # "almost as high as 0.56" is below it, near it: no bound (pass eighty-seven)
    if re.search(r"(?<![\w-])(?:from|between)" + _SP + "$", before[:m.start()], re.I):
        return "range"  # "from as low as 0.13 to as high as 0.56": two bounds or a range? (pass eighty-seven)
    sentence = re.split(r"[.;:!?]\s|\n\s*\n", before[:m.start()])[-1]
    clause = re.split(r"[,;:()—–]", sentence)[-1]  # ("not rounded (...), and are still up to" is no negated bound)
    if _NEGATION.search(" ".join(re.findall(r"[\w']+", clause)[-12:])) or _NO_SUBJECT.search(sentence):
        return "negated"
    return "down" if m["lower"] or m["lower_sign"] else "up"


#: A "≤" or "≥" right after a value, not before another value (that is a comparison of the
#: two: :func:`comparisons`): "{{ value }} ≤ w" says the value is a lower bound of w.
_SIGN_AFTER = re.compile(r"(?:" + _MARKER + "|" + _WRAP[3:-2] + r")*(?P<sign>[≤≥])(?!" + _WRAP + r"\{\{\s*value\b)")


#: A name that labels a value after a bound's words or an "=", after an optional colon or comma:
#: one to three words, one with a capital letter or a possessive ("at most: MHA 0.56", "≤
#: GQA 0.57", "≥ MHA (GQA)", "at most GQA's mean loss 0.56"), their emphasis, code and links
#: dropped first.
_LABEL_WORD = r"[^\W\d_][\w-]{0,23}(?:['’]s)?"
_LABELS_AT_END = [re.compile(r"(?:[^\S\n]*[:,])?[^\S\n]+(?P<label>" + words + r")[^\S\n]*:?[^\S\n]*$")
                  for words in (_LABEL_WORD, _LABEL_WORD + r"[^\S\n]+\(?" + _LABEL_WORD + r"\)?",
                                _LABEL_WORD + r"(?:[^\S\n]+\(?" + _LABEL_WORD + r"\)?){2}")]
#: After a bound's words and a colon, a label of up to six words ("at most: GQA with RoPE 0.56").
_LABEL_AFTER_COLON = re.compile(r"[^\S\n]*:[^\S\n]+(?P<label>" + _LABEL_WORD + r"(?:[^\S\n,]+" + _LABEL_WORD
                                + r"){0,5})[^\S\n]*:?[^\S\n]*$")


def _before_labels(before: str) -> list[str]:
    """What stands before the name that ends ``before``, for a name of one, two and three words
    (:data:`_LABELS_AT_END`) and for one after a colon (:data:`_LABEL_AFTER_COLON`), its last
    words' markup dropped."""
    plain = re.sub(r"\[([^\[\]]*)\]\([^()]*\)", r"\1", before[-200:])
    plain = re.sub(r"</?(?:em|strong|b|i|u|code|span|abbr|a|mark|small)\b[^<>]*>|[*`]|(?<![\w])_|_(?![\w])", "", plain)
    named = [plain[:m.start()] for m in (p.search(plain) for p in _LABELS_AT_END)
             if m and (re.search(r"[A-Z]", m["label"]) or re.search(r"['’]s\b", m["label"]))]
    colon = _LABEL_AFTER_COLON.search(plain)  # (a colon after the bound's words introduces what follows)
    return named + ([plain[:colon.start()]] if colon else [])


def _side_before_label(before: str) -> str | None:
    """The side of a bound whose words stand before a value's label, not the value: "the errors
    are at most: MHA 0.56" bounds 0.56 (passes 111 and 112: the label hid the bound from the
    rules, and the page showed it)."""
    return next((side for lead in _before_labels(before) if (side := _side_before(lead))), None)


def bounds(text: str, found) -> list[tuple]:
    """The value directives in ``found`` that ``text`` states as a bound: (directive, "down" for
    a lower bound, "up" for an upper one), by the words right before each (:data:`_LOWER_WORDS`,
    :data:`_UPPER_WORDS`, "≥", "≤" in any spelling), or right after it ("or less", "or more",
    which say more than a list would: pass seventy); a minus the prose writes before the value
    turns the side. A value after another bound in a list ("at most a and b") is not read (the
    list may go on with what is not a bound: "at most a, and b on average": pass seventy). An
    end of a range is the range rule's (:func:`ranges`): "speedups of up to a–b" rounds a range
    outward, and "rises from a up to b" is a range or a change."""
    in_range = {id(d) for pair in ranges(text, found) for d in pair}
    compared = {id(b) for _, b, _ in comparisons(text, found)}  # ("B's a ≥ A's b": held to data, not a bound)
    out = []
    for d in sorted((d for d in found if d.keyword == "value"), key=lambda d: d.start):
        after = _BOUND_AFTER.match(_as_read(_ahead(text, d.end, 80)))
        sign = _SIGN_AFTER.match(_as_read(_ahead(text, d.end, 80)))  # "0.56 ≤ w": a lower bound (pass 102)
        side = (("up" if after["upper"] else "down") if after else ("down" if sign["sign"] == "≤" else "up") if sign
                else _side_before(_back(text, d.start, 400))
                or (None if id(d) in compared else _side_before_label(_back(text, d.start, 400))))
        if side in ("up", "down") and prose_minus(text, d):  # "≤ −0.56", "−2.35 or less" bound −x: the other side
            side = "down" if side == "up" else "up"
        if side and id(d) not in in_range:
            out.append((d, side))
    return out


#: The Greek letters TeX spells as commands: a letter of the sentence, not markup.
_TEX_LETTERS = r"(?:alpha|beta|gamma|delta|epsilon|varepsilon|zeta|eta|theta|vartheta|iota|kappa|lambda|mu|nu|xi|pi|rho|sigma|tau|upsilon|phi|varphi|chi|psi|omega|Gamma|Delta|Theta|Lambda|Xi|Pi|Sigma|Upsilon|Phi|Psi|Omega|ell|infty)"
#: The signs the net below looks for: an equality or a non-strict bound, the claims the rules read.
_NET_SIGNS = "".join(_EQUALS) + "≤≥"
#: One piece of what may stand between such a sign and a value that shows no letter or digit of
#: the sentence: spaces and markup (:data:`_WRAP`), a tag, a footnote's marker, a link's label or
#: destination, a TeX command that opens the value's group or draws no letter, any character
#: that is neither a letter, a digit nor a sign.
_GAP_PIECE = re.compile(r"(?:" + _MARKER + "|" + _WRAP[3:-2] + r"|</?[A-Za-z](?:[^<>\x22\x27]|\x22[^\x22]*\x22|\x27[^\x27]*\x27)*>|\[\^[^\]]*\]|\]\[[^\]]*\]|\]\([^()]*\)"
                        r"|\\[A-Za-z]+(?:\[[^\[\]]*\])*(?:\{[^{}]*\})*\{|\\(?!" + _TEX_LETTERS + r"(?![A-Za-z]))[A-Za-z]+"
                        r"|\\[^A-Za-z]|[^\w\s" + _NET_SIGNS + r"<>≠≈~])$", re.S)


def _gap(before: str) -> tuple[str, list]:
    """``before`` (as read) split into what stands before its gap, and the gap's pieces: what
    shows no letter or digit of the sentence (:data:`_GAP_PIECE`), last first."""
    pieces = []
    while before:
        m = _GAP_PIECE.search(before)
        if not m or m.start() == len(before):
            break
        pieces.append(m[0])
        before = before[:m.start()]
    return before, pieces


def unreadable_in_gap(text: str, d) -> str | None:
    """A character outside the alphabet a value may stand after (:func:`_readable`) anywhere in
    the gap before the value ``d`` or in the one after it (what shows no letter or digit: signs,
    punctuation, markup), or None. The alphabet held only for the character right before a value,
    so "x ⋜ (0.56)" and "0.56 ⋝ x" published a bound no rule reads (pass 104)."""
    rest, pieces = _gap(_as_read(_back(text, d.start, 80)))
    after = _TAG.sub(" ", re.sub(r"<!--.*?(?:-->|$)", "", _as_read(_ahead(text, d.end, 40)), flags=re.S))
    after = re.sub(r"\\[A-Za-z]+|\\[^A-Za-z]", " ", after)  # (TeX's commands: the alphabet of _TEX_READ reads them)
    gap_after = re.match(r"[^\w]*", after)[0]
    # (and the letter that ends each gap: "ㅡ(0.56)" and "ニ (0.56)" draw a minus and an "=": pass 105)
    ends = rest[-1:] + after[len(gap_after):][:1]  # (a cased letter, "ℓ", is drawn as one; "ㅡ", "ニ" are no cased letters)
    chars = [p for p in pieces if len(p) == 1] + list(gap_after) + [c for c in ends if unicodedata.category(c) not in ("Lu", "Ll", "Lt")]
    odd = next((c for c in chars if not c.isspace() and not _readable(c)), None)
    return f"{odd!r} (U+{ord(odd):04X} {unicodedata.name(odd, 'with no name')})" if odd else None


def sign_in_gap(text: str, d) -> str | None:
    """The sign ("=" or one like it, "≤", "≥") that stands before the value ``d`` with nothing
    between that shows a letter or a digit (:data:`_GAP_PIECE`), or None; a heading's line of
    "=" is none. The rules read such a sign through a list of what may stand between it and the
    value; each pass from ninety-five to one hundred found a construct the list missed (a
    footnote's marker, a link's label, a table's alignment row, ``\\>``, ``\\left|``), so a
    sign this net finds and the rules did not read is refused (:func:`check_read_signs`)."""
    before, _ = _gap(_as_read(_back(text, d.start, 80)))
    if not before or before[-1] not in _NET_SIGNS or re.search(r"(?:^|\n)[ \t]*={2,}[ \t]*$", before):
        return None
    return "=" if before[-1] in _EQUALS else before[-1]


def check_read_signs(page_where: str, text: str, d, read: bool) -> None:
    """A value with an "=" (or its like) before it that :func:`follows_equals` did not read, or
    a "≤" or "≥" that no bound or range rule read (``read``), with only markup and signs
    between (:func:`sign_in_gap`), is refused: the value would be published unchecked against
    the claim its sign makes."""
    sign = sign_in_gap(text, d)
    if sign == "=" and not follows_equals(text, d.start, d.end) or sign in ("≤", "≥") and not read:
        raise ClaimError(f"{page_where}: {d.name}'s value stands after {sign!r} with only markup or signs between, "
                         "which the checks do not read through: the claim the sign makes would go unchecked; put "
                         "the value right after the sign (spaces, emphasis and a formula's spacing may stand "
                         "between), or rephrase (pass one hundred and one)")


def check_range_end(page_where: str, text: str, d) -> None:
    """A value at a range's end read as :func:`check_sign` reads a bound's, and refused where "or
    more" or "or less" follows it (:data:`_BOUND_AFTER`): "from 2.1× to 7.9× or more" is a range's
    end and a bound at once, and the range rule asked for the rounding that made it false (pass
    eighty-three)."""
    check_sign(page_where, text, d)
    if _BOUND_AFTER.match(_as_read(_ahead(text, d.end, 80))):
        raise ClaimError(f"{page_where}: {d.raw} ends a range and is a bound ('or more', 'or less') at once, "
                         "which this check does not read as one: state the range and the bound in sentences "
                         "of their own")


def check_bound(page_where: str, d, value, shown: str, side: str, minus: bool = False) -> None:
    """A value the prose states as a bound (:func:`bounds`) rounded to its side: a lower bound
    never reads above its value, an upper bound never below."""
    if side == "range":
        raise ClaimError(f"{page_where}: {d.name}'s value follows bound words right after 'from' or 'between' ('from "
                         "as low as a to as high as b'), which read as a range (its ends rounded outward) and as "
                         "two bounds (rounded the other way) at once; this check does not read it: write the range "
                         "('from a to b') or the bounds ('at least a', 'at most b')")
    if side == "negated":
        raise ClaimError(f"{page_where}: {d.name}'s value follows bound words after a negation ('no head scores as "
                         "high as', 'not within', 'isn't at most'), which turns the bound around; this check does "
                         "not read such a bound: write it without the negation ('every head scores at most', "
                         "'at least ... away from zero'), with round=")
    if not as_number(page_where, d, value) or isinstance(value, float) and value in (float("inf"), float("-inf")):
        return  # (and ∞, which allow=inf shows as itself: no rounding to a side, pass 108)
    kind = "a lower bound ('at least', '≥', 'or more'...)" if (side == "down") != minus else \
        "an upper bound ('at most', 'up to', 'within', '≤', 'or less'...)"
    kind += " on minus the value" if minus else ""
    declared(page_where, d, value, shown, kind, "or 'about' before it, where it is not a bound")
    number, exact = exact_number(shown), stands_for(value)[-1]
    if number is not None and (number > exact if side == "down" else number < exact):
        raise ClaimError(
            f"{page_where}: {d.name}'s data() holds {value!r} at {d.args[0]!r}, shown as {shown.strip()!r} as "
            f"{kind}, which it {'exceeds' if side == 'down' else 'falls short of'}: the sentence is read as "
            f"'{'≥' if (side == 'down') != minus else '≤'} {'−' if minus else ''}{shown.strip()}' for "
            f"{'−' if minus else ''}{value!r}; if that is what it says, write round={side} (a bound is rounded the "
            "way it bounds); if not, the check misreads it (hooks/claims.py lists what it reads): rephrase it, "
            "or write 'about' before it where it is no bound")


#: Letters of other scripts that look like Latin ones ("аt most" with a Cyrillic а: pass
#: eighty-nine); mathematical alphanumerics ("𝐚𝐭 𝐦𝐨𝐬𝐭") are read by NFKC.
_LOOKALIKE = dict(zip("аеорсухіАЕОРСХВМНКТ", "aeopcyxiAEOPCXBMHKT"))


def _plain(text: str) -> str:
    """``text`` as :func:`_as_read`, with its markup gone: tags, emphasis, code spans, TeX's
    commands and braces (``\\overset{!}{=}`` is "! =", ``\\mathrel{≤}`` "≤"), another value
    directive read as "VALUE"."""
    text = re.sub(r"\{\{[^{}]*\}\}", " VALUE ", _as_read(text))
    text = re.sub(r"<sup\b[^<>]*>[^<>]*</sup>|\[\^[^\]]*\]", " ", text)  # a footnote's marker
    text = re.sub(r"</?(?:span|em|strong|b|i|u|s|mark|small|code|a|abbr)\b[^<>]*>|[*_`]", "", text)  # ("m**os**t")
    text = re.sub(r"</?[A-Za-z](?:[^<>\x22\x27]|\x22[^\x22]*\x22|\x27[^\x27]*\x27)*>|\\[A-Za-z]+|\\[,;:! ()\[\]]|[{}$]", " ", text)
    text = "".join(_LOOKALIKE.get(c, c) if ord(c) < 0x1D400 else unicodedata.normalize("NFKC", c) for c in text)
    return re.sub(r"[\s\u00a0]+", " ", text)


# ---- two values compared with each other -----------------------------------------------------------------

#: Between two values, what compares them: a sign of an order or an equality, or the words of a
#: bound, after at most two verbs of being ("a ≤ b", "a, stays ≤ b", "a is at most b": pass
#: eighty-seven, where round=up on b made "0.57 ≤ 0.58" of 0.5734 and 0.5701). Any other word,
#: a number or a formula's edge between them makes it no comparison of the two ("a KiB = b
#: bytes", "\\(2 \\times a \\times 2\\) = b", "\\(T = a\\), \\(S = b\\)").
_VERBS = r"(?:is|are|was|were|stays?|stayed|remains?|remained|keeps?|sits?|lies|falls?|reads?|ends?|still|always|then|also)"
_COMPARED = re.compile(r"[\s,()]*(?:" + _VERBS + r"[\s,]+){0,2}(?P<sign>[≤≥<>=≠≪≫≺≻≼≽⪯⪰])?\s*", re.I)
# (≪ ≺ ≫ ≻ ≼ ⪯ ≽ ⪰, much less and precedes: at least an order, which data() and the digits must
# keep: pass ninety-seven)
_ORDER = {**dict.fromkeys("≤≼⪯", lambda a, b: a <= b), **dict.fromkeys("≥≽⪰", lambda a, b: a >= b),
          **dict.fromkeys("<≪≺", lambda a, b: a < b), **dict.fromkeys(">≫≻", lambda a, b: a > b),
          "=": lambda a, b: a == b, "≠": lambda a, b: a != b}


#: Words that compare the values on either side of them, with the sign they state.
_COMPARATIVES = ((r"(?:less|smaller|lower|fewer)\W+than", "<"), (r"(?:more|greater|higher|larger|bigger)\W+than"
                 r"|beats?|outscores?|exceeds?", ">"), (r"at\W+least", "≥"), (r"at\W+most", "≤"),
                 (r"the\W+same\W+as|equal\W+to|equals", "="))


def _labelled_comparison(gap: str) -> str | None:
    """The sign a gap between two values states where labels stand beside them ("B's a is ≥
    A's b", "a (B) ≥ b (A)", "B's a beats A's b": pass eighty-nine): one sign of an order (not
    "=", which sets a variable: "d = a, H = b") or one comparative, at most six words, no
    conjunction, no unit (a unit makes two quantities: "a KiB, more than b bytes")."""
    words = re.findall(r"[\w'’]+", gap)
    # right after the first value: a label in brackets, then a verb, the sign or a comparative; a
    # noun there is its unit ("a positions, reached at most b rad", "a nats higher than greedy's",
    # ", ALiBi's at most b"): two quantities, or two clauses
    first = re.match(r"[\s)\]]*(?:\([^()]*\)|\[[^\[\]]*\])?\s*([≤≥<>≠]|[\w'’]+)", gap)
    if len(words) > 6 or re.search(r"\b(?:and|but|or|while|whereas|against|versus|vs)\b", gap, re.I) or not first or \
            not re.fullmatch(r"[≤≥<>≠]|" + _VERBS + r"|beats?|outscores?|exceeds?|at|the|equals?|less|smaller|lower|fewer"
                             r"|more|greater|higher|larger|bigger", first[1], re.I):
        return None
    if re.search(r"\b(?:head|layer|step|position|token|width|seed|length|context|base|block|at|of|in)\W*$", gap, re.I):
        return None  # ("more than removing head 3": the second value is a name, not an operand)
    signs = re.findall(r"[≤≥<>≠]", gap)
    found = [sign for words_re, sign in _COMPARATIVES if re.search(r"(?<![\w-])(?:" + words_re + r")(?![\w-])", gap, re.I)]
    return (signs + found)[0] if len(signs + found) == 1 else None


def comparisons(text: str, found) -> list[tuple]:
    """The pairs of values ``text`` compares with each other, (a, b, sign): "{{ value a }} ≤
    {{ value b }}", "{{ value a }}, stays at most {{ value b }}" (:data:`_COMPARED`; bound words
    are their sign). Such a claim is on the two values, whatever their rounding: the caller
    holds it to data() (:func:`check_comparison`)."""
    values = sorted((d for d in found if d.keyword == "value"), key=lambda d: d.start)
    out = []
    for a, b in zip(values, values[1:]):
        # a sign in a formula of its own is the sign ("a \\(<\\) b"); "&lt;" and "!=" are no sentence's end
        read = re.sub(r"\\\(\s*([<>≤≥=≠≪≫≺≻≼≽⪯⪰])\s*\\\)|\$\s*([<>≤≥=≠≪≫≺≻≼≽⪯⪰])\s*\$", lambda m: m[1] or m[2],
                      _as_read(text[a.end:b.start]))
        if re.search(r"[.!?;]|\n\s*\n|\\[()\[\]]|\$", read):
            continue
        m = _COMPARED.fullmatch(_plain(read))
        if m and m["sign"]:
            out.append((a, b, m["sign"]))
            continue
        bound = _BOUND_BEFORE.search(read)
        if bound and _COMPARED.fullmatch(_plain(read[:bound.start()])):
            out.append((a, b, "≥" if bound["lower"] or bound["lower_sign"] else "≤"))
            continue
        sign = _labelled_comparison(_plain(read))
        if sign:
            out.append((a, b, sign))
    return out


def check_comparison(page_where: str, a, va, b, vb, sign: str, shown_a: str = "", shown_b: str = "") -> None:
    """A comparison of two values (:func:`comparisons`) holds for the values data() holds, and
    for the numbers the page shows (``shown_a``, ``shown_b``): "0.6 ≤ 0.56" of 0.551 and 0.552
    is true of the data and false as read (pass ninety-one)."""
    if not all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in (va, vb)):
        return
    if not _ORDER[sign](stands_for(va)[-1], stands_for(vb)[-1]):
        raise ClaimError(f"{page_where}: the sentence compares {a.raw} with {b.raw} ('{sign}'), which data() "
                         f"does not hold: {va!r} {sign} {vb!r} is false (a comparison of two values holds for the "
                         "values, whatever their rounding); rephrase it, or check the data")
    na, nb = exact_number(shown_a), exact_number(shown_b)
    if na is not None and nb is not None and not _ORDER[sign](na, nb):
        raise ClaimError(f"{page_where}: the sentence compares {a.raw} with {b.raw} ('{sign}'), which data() "
                         f"holds ({va!r} {sign} {vb!r}) but the page shows as '{shown_a.strip()} {sign} "
                         f"{shown_b.strip()}', false as read: give the two the same digits, or round= that keeps "
                         "the order")


# ---- every rounded value says what its sentence claims ------------------------------------------------


#: A text data() holds whose numbers are exact by their form, which a page shows as it is: a
#: date ("2026-11-22"), a version ("2.13.0+cpu"), whole numbers alone or in a list ("42", "1,
#: 2, 3", "[[1, 2], [3, 4]]", "[NaN, 0]"). Any other text with a digit in it may hold a number
#: data() rounded ("0.56", "[0.333, 0.333]", "56%", "56 pct", "12M", "≤0.56": passes ninety-two
#: to ninety-six) or be a name ("124M", "H100 80GB"), and says which (:func:`check_declared`):
#: the alphabet of exact forms, not a list of rounded ones, which every pass lengthened.
_EXACT_TEXT = re.compile(r"\d{4}-\d{2}-\d{2}|v?\d+(?:\.\d+){2,}(?:[-+][0-9A-Za-z.]+)?"
                         r"|[\[\](){}\s,;]*(?:(?:[-−]?\d+|NaN|nan|[-−]?inf)(?:[\[\](){}\s;]|,(?!\d))*)*")


def text_with_a_number(value) -> bool:
    """Whether ``value`` is a text with a digit or another numeral in it (in any script, past
    characters a reader does not see) that is not in an exact form (:data:`_EXACT_TEXT`)."""
    if not isinstance(value, str):
        return False
    text = "".join(str(unicodedata.decimal(c, c)) for c in unicodedata.normalize("NFKC", value)
                   if unicodedata.category(c) != "Cf")
    numeral = any(unicodedata.numeric(c, None) is not None for c in text)  # ("〇.五六", "❺❻%": pass 98)
    return numeral and not _EXACT_TEXT.fullmatch(text.strip())


def check_declared(page_where: str, text: str, d, value, shown: str, read: bool = False) -> None:
    """A value its format rounds says what the sentence claims of it: ``round=nearest`` where it
    states the value to the digits shown and no more, ``round=up`` where it needs the number
    shown to be no less than the value (an upper bound, a range's high end), ``round=down`` where
    no more (a lower bound, a range's low end); otherwise the page is refused. A value shown as
    itself (every digit, or its shortest decimal) needs no word, and one after "=" must be shown
    so (figure_markdown.value_text). A text with a number in it that is not exact by its form
    (:func:`text_with_a_number`) says so too: round=nearest, the text to its digits.

    Why every value, and not the ones next to the words of a claim: the rules above read a
    narrow set of words and check what they read, and every adversarial pass found a phrasing
    they missed; a net of claim words behind them (passes eighty-seven to ninety) missed
    phrasings too ("V is larger than every weight", "to infinite precision", a claim in the
    sentence before), and refused a third of the ordinary sentences it was shown. No reading of
    words is complete; the author's word is. With it declared, the number shown is true in the
    sense declared (a bound rounded to its side, bound()), the words the rules read are held to
    it (:func:`declared`, :func:`check_bound`, :func:`check_range`), and a false sentence needs
    an author who declares "to its digits" of a bound: the same error as writing it."""
    if isinstance(value, str) and not any(c.isalnum() for c in value):
        raise ClaimError(f"{page_where}: {d.name}'s data() holds the text {value!r} at {d.args[0]!r}, which shows no "
                         "letter and no digit: a blank or a sign ('−', '=') that the page writes itself; from data() "
                         "it stands where the checks read none (pass ninety-nine: a '−' from data() before 'at "
                         "most 0.57', an empty text between '=' and 0.69)")
    if text_with_a_number(value) and d.options.get("round") != "nearest":
        raise ClaimError(f"{page_where}: {d.name}'s data() holds the text {value!r} at {d.args[0]!r}: a text with a "
                         "number in it (a number with a fraction that data() wrote as text, a percentage or a "
                         "number with a multiplier, a name such as '124M'), which the page shows as it is, rounded "
                         "or not (pass ninety-two: 'less than 0.56' of such a text was published; pass ninety-five: "
                         "'under 56%'); give data() the number and the page its format and round=, or, where the "
                         "sentence states the text as it is, to its digits (a name, a list data() printed), write "
                         "round=nearest")
    number = isinstance(value, numbers.Real) and not isinstance(value, bool)
    if number and not read and not exactly(shown, value):
        words, pieces = _gap(_as_read(_back(text, d.start, 400)))
        if pieces and _side_before(words) in ("up", "down", "negated") and not _side_before(_back(text, d.start, 400)):
            raise ClaimError(f"{page_where}: {d.name}'s value, rounded to {shown.strip()!r}, stands after bound words "
                             f"({words.strip()[-24:]!r}) with {''.join(reversed(pieces)).strip()!r} between, which "
                             "the checks do not read through: the bound's side would go unchecked; put the value "
                             "right after the words (spaces and emphasis may stand between), or rephrase (pass one "
                             "hundred and four: 'at most (0.56)' of 0.5634)")
    if (d.options.get("round") in ("up", "down") and number and not read and exactly(shown, value)
            and not follows_equals(text, d.start, d.end)):  # (0.56 too, not only 0.5: pass ninety-eight)
        raise ClaimError(f"{page_where}: {d.name}'s data() holds {value!r} at {d.args[0]!r}, exactly the number "
                         f"shown, {shown.strip()!r}, so round={d.options['round']} leaves no room: true of 'at "
                         "most' and 'at least', false of a strict bound ('under', 'less than', 'more than', '<'), "
                         "which the build does not read (pass ninety-six: 'under 0.50' for 0.5); write a bound or "
                         "a range the build reads ('at most', 'no more than', '≤', 'from … to'), or reword the "
                         "sentence to state the value itself ('is 0.50'), with no round= (dropping round= alone "
                         "leaves a strict bound false)")
    if (d.options.get("round") or not number or exactly(shown, value) or follows_equals(text, d.start, d.end)):
        return
    raise ClaimError(
        f"{page_where}: {d.name}'s data() holds {value!r} at {d.args[0]!r}, shown as {shown.strip()!r}: its format "
        "rounds it, so the page says what the sentence claims of it (a reader cannot tell; the build reads "
        "only some words): round=nearest where it states the value to the digits shown (no bound, no range, "
        "not exact), round=up where it needs the number shown to be no less than the value (an upper bound: "
        "'at most', 'never exceeds', 'within'; a range's high end), round=down where no more (a lower bound; a "
        "range's low end); a strict bound ('under', 'less than') is false where the value lands on the digits "
        "shown, and the build refuses round= there unless it reads the bound; a minus the page writes before the value turns the side ('at most −{{ value }}' is "
        "round=down), a negative value in data() does not (round=up shows −0.5634 as −0.56); "
        "where it states the value exactly, show every digit")


#: Words after a written number that multiply it.
_MULTIPLIER_WORDS = {"thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
#: Their abbreviations, in their own case ("m" is a metre or a minute, "B" a byte).
_MULTIPLIER_SIGNS = {"k": 10**3, "K": 10**3, "M": 10**6, "mn": 10**6, "bn": 10**9}
#: A multiplier right after a value ("2.3 million", "2.3M").
_MULTIPLIER_AFTER = re.compile(r"[\s\u00a0*_`]*(?P<word>(?i:(?:thousand|million|billion|trillion)s?)|"
                               + "|".join(sorted(_MULTIPLIER_SIGNS, key=len, reverse=True)) + r")(?![\w/])")


def _multiplier(word: str | None) -> int | None:
    """The factor a multiplier word ("million", "Millions") or abbreviation ("k", "M") stands
    for, or None."""
    if not word or word in _MULTIPLIER_SIGNS:
        return _MULTIPLIER_SIGNS.get(word) if word else None
    word = word.lower()
    return _MULTIPLIER_WORDS.get(word[:-1] if word.endswith("s") else word)


def matched_percent(literal: Literal, text: str, d, shown: str, where: str = "", *, first: bool = True) -> Fraction:
    """The number a :class:`Literal` end stands for beside the value ``d`` (shown as ``shown``):
    a multiplier written after it counts unless the value has the same ("from 4 thousand down to
    {{ value }}" is 4,000; "from 1.5 million to 2.3 million" compares 1.5 with 2.3: passes seventy
    and seventy-one); a written end without "%" beside a percentage is a percentage too ("between 50 and 73%"
    is 50% to 73%), and one with "%" beside a value the prose follows with "%" or "per cent" is
    in that value's units ("from 90% to 12.4%" with 12.4 from data(): pass seventy). Two
    multipliers that differ ("from 1.5 million to 2.3 thousand", "1.5 million to 2.3M" read as
    1,500,000 to 2.3: pass seventy-five), or one on a single end but the first written ("from 5
    to 2.3 million", "from 1.5 to 2 million": 1.5 or 1.5 million?), are refused (``where`` names
    the value; ``first``: the written end comes first)."""
    after = _as_read(_ahead(text, d.end, 16))
    value = literal.value
    multiplier = _multiplier(literal.unit)
    m = _MULTIPLIER_AFTER.match(after)
    on_value = _multiplier(m["word"]) if m else None
    if on_value and on_value != multiplier or multiplier and not on_value and not first:
        raise ClaimError(f"{where}: a range between {literal.raw}{' ' + literal.unit if literal.unit else ''} and "
                         f"{d.name}'s value{' followed by ' + repr(m['word']) if m else ''} gives its ends in two "
                         "units, or leaves one end's unit to the reader; write both ends alike (a range's ends are "
                         "checked as numbers of one unit)")
    if multiplier and not on_value:
        value *= multiplier  # ("from 4 thousand down to 2,047" is 4,000 to 2,047: pass seventy)
    if not literal.percent and shown.strip().endswith("%"):
        if 0 < value <= 1:  # "between 12.7% and 1": 1% or the whole? (pass eighty-three)
            raise ClaimError(f"{where}: a range between {literal.raw} and {d.name}'s percentage leaves the reader to "
                             f"guess whether {literal.raw} is a share or a percent; write it with '%' "
                             f"({literal.raw}% or {float(value * 100):g}%)")
        return value / 100
    if literal.percent and not shown.strip().endswith("%") and re.match(r"[\s\u00a0*_`]*(?:%|per\s*cent\b)", after, re.I):
        return value * 100
    return value
