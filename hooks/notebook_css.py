"""The part of a stylesheet that a set of pages can use (for the notebook pages' CSS).

mkdocs-jupyter puts JupyterLab's whole stylesheet (about 660 KB: every widget, dialog and
menu of the JupyterLab application) inline in every notebook page. A rendered notebook
uses a few dozen of its classes. :func:`prune` keeps a rule only if one of its selectors
can match those pages:

- a selector is kept if every class it requires is used on the pages (classes inside
  ``:not()``, ``:is()``, ``:where()``, ``:has()`` are not required, and element names,
  attributes and pseudo-classes are not checked: when in doubt, a rule stays);
- ``@media`` and ``@supports`` blocks keep their kept rules, ``@keyframes`` stay if a kept
  rule names them; ``@charset`` goes (the site's stylesheets are UTF-8);
- custom properties (``--jp-...``) stay if a kept rule, the pages or the site's own
  stylesheets read them (``var(--name)``), directly or through another kept property.

The result is deterministic: the input's order, the input's text for every kept part.
"""
from __future__ import annotations

import re

import tinycss2

VAR_RE = re.compile(r"var\(\s*(--[\w-]+)")
CLASS_ATTR_RE = re.compile(r'\bclass="([^"]*)"')
LENIENT_FUNCTIONS = {"not", "is", "where", "has", "matches", "-webkit-any", "-moz-any"}
KEEP_IF_NAMED = ("keyframes", "-webkit-keyframes", "-moz-keyframes", "-o-keyframes")


def classes_in(html: str) -> set[str]:
    """Every class name used in ``html``'s ``class`` attributes."""
    return {c for m in CLASS_ATTR_RE.finditer(html) for c in m.group(1).split()}


def _split_selectors(prelude) -> list[list]:
    out, cur = [], []
    for tok in prelude:
        if tok.type == "literal" and tok.value == ",":
            out.append(cur)
            cur = []
        else:
            cur.append(tok)
    out.append(cur)
    return out


def _required_classes(selector) -> set[str]:
    need, prev_dot = set(), False
    for tok in selector:
        if prev_dot and tok.type == "ident":
            need.add(tok.value)
        prev_dot = tok.type == "literal" and tok.value == "."
        # function tokens (:not(...) and the like) are skipped whole: nothing inside is required
    return need


def _serialize(tokens) -> str:
    return tinycss2.serialize(tokens).strip()


class _Rule:
    """A kept qualified rule: its selector text and its declarations as (name, text) pairs."""

    def __init__(self, selectors: str, declarations: list[tuple[str | None, str]]):
        self.selectors, self.declarations = selectors, declarations

    def reads(self) -> set[str]:
        return {v for name, text in self.declarations if name is None or not name.startswith("--")
                for v in VAR_RE.findall(text)}

    def text(self, keep_vars: set[str]) -> str:
        decls = [text for name, text in self.declarations
                 if name is None or not name.startswith("--") or name in keep_vars]
        return f"{self.selectors}{{{';'.join(decls)}}}" if decls else ""


def _declarations(rule) -> list[tuple[str | None, str]]:
    out = []
    for node in tinycss2.parse_blocks_contents(rule.content, skip_comments=True, skip_whitespace=True):
        if node.type == "declaration":
            out.append((node.name if node.name.startswith("--") else node.lower_name, node.serialize().strip()))
        elif node.type != "error":
            out.append((None, node.serialize().strip()))  # nested rules: kept as they are
    return out


def _walk(nodes, used: set[str]) -> list:
    """Kept items, in order: _Rule, ("block", prelude, [items]), ("keyframes", name, text), ("raw", text)."""
    out = []
    for node in nodes:
        if node.type == "qualified-rule":
            keep = [s for s in _split_selectors(node.prelude) if _required_classes(s) <= used]
            keep = [s for s in keep if _serialize(s)]
            if keep:
                out.append(_Rule(",".join(_serialize(s) for s in keep), _declarations(node)))
        elif node.type == "at-rule":
            kw = node.lower_at_keyword
            if kw == "charset":
                continue
            if kw in ("media", "supports") and node.content is not None:
                inner = _walk(tinycss2.parse_blocks_contents(node.content, skip_comments=True,
                                                             skip_whitespace=True), used)
                if inner:
                    out.append(("block", f"@{node.at_keyword} {_serialize(node.prelude)}", inner))
            elif kw in KEEP_IF_NAMED:
                out.append(("keyframes", _serialize(node.prelude), node.serialize()))
            else:
                out.append(("raw", node.serialize()))
    return out


def _rules(items):
    for item in items:
        if isinstance(item, _Rule):
            yield item
        elif item[0] == "block":
            yield from _rules(item[2])


def _custom_properties(items) -> dict[str, set[str]]:
    """Each custom property defined in ``items`` -> the custom properties its values read."""
    out: dict[str, set[str]] = {}
    for rule in _rules(items):
        for name, text in rule.declarations:
            if name and name.startswith("--"):
                out.setdefault(name, set()).update(VAR_RE.findall(text))
    return out


def _emit(items, keep_vars: set[str], animations: str) -> str:
    parts = []
    for item in items:
        if isinstance(item, _Rule):
            parts.append(item.text(keep_vars))
        elif item[0] == "block":
            inner = _emit(item[2], keep_vars, animations)
            if inner:
                parts.append(f"{item[1]}{{{inner}}}")
        elif item[0] == "keyframes":
            if re.search(rf"(?<![\w-]){re.escape(item[1])}(?![\w-])", animations):
                parts.append(item[2])
        else:
            parts.append(item[1])
    return "\n".join(p for p in parts if p)


def prune(css: str, used_classes: set[str], also_reads: str = "") -> str:
    """The rules of ``css`` that can apply to pages using ``used_classes``; custom properties
    kept if read by the kept rules or by ``also_reads`` (the pages and the site's other CSS)."""
    items = _walk(tinycss2.parse_stylesheet(css, skip_comments=True, skip_whitespace=True), used_classes)
    defines = _custom_properties(items)
    keep = set(VAR_RE.findall(also_reads))
    for rule in _rules(items):
        keep |= rule.reads()
    todo = list(keep)
    while todo:
        for ref in defines.get(todo.pop(), ()):
            if ref not in keep:
                keep.add(ref)
                todo.append(ref)
    animations = " ".join(text for rule in _rules(items) for name, text in rule.declarations
                          if name and name.startswith(("animation", "-webkit-animation")))
    return _emit(items, keep, animations) + "\n"
