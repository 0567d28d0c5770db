"""References: each entry's "Used on" list is made from the pages' links (hooks/site_references.py),
so it names exactly the pages that cite the entry, in nav order."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from helpers import load_file

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def hook():
    return load_file(ROOT / "hooks" / "site_references.py", "site_references")


def nav():
    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("!", lambda loader, suffix, node: None)  # !ENV, !relative
    return yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=Loader)["nav"]


def test_used_on_lists_the_citing_pages_in_nav_order():
    h = hook()
    md = "**A (2020).** Paper A.\n{: #a-2020 }\n\n**B (2021).** Paper B,\nsecond line.\n{: #b-2021 }\n"
    pages = {"one.md": "see [A](references.md#a-2020) and [B](references.md#b-2021)", "two.md": "[A](references.md#a-2020) twice [A](references.md#a-2020)"}
    out = h.with_used_on(md, h.citations(pages), {"one.md": "First page", "two.md": "RoPE"})
    assert "Paper A.\nUsed on [first page](one.md), [RoPE](two.md).\n{: #a-2020 }" in out
    assert "second line.\nUsed on [first page](one.md).\n{: #b-2021 }" in out


@pytest.mark.parametrize("md, pages, message", [
    ("**A.** x.\n{: #a }\n", {}, "no page cites #a"),
    ("**A.** x. Used on [p](p.md).\n{: #a }\n", {"p.md": "references.md#a"}, "says 'Used on' by hand"),
    ("**A.** x.\n{: #a }\n", {"p.md": "references.md#a references.md#zz"}, "p.md cites references.md#zz, which has no entry"),
])
def test_used_on_refuses_what_would_go_stale(md, pages, message):
    h = hook()
    from mkdocs.exceptions import PluginError

    with pytest.raises(PluginError, match=re.escape(message)):
        h.with_used_on(md, h.citations(pages), {})


def test_every_entry_is_cited_and_the_stale_lists_are_complete_now():
    h = hook()
    titles = h.nav_titles(nav())
    pages = {src: (DOCS / src).read_text(encoding="utf-8") for src in titles
             if src.endswith(".md") and src != "references.md"}
    cited = h.citations(pages)
    out = h.with_used_on((DOCS / "references.md").read_text(encoding="utf-8"), cited, titles)

    def used_on(anchor):
        line = re.search(rf"^Used on (.*)\.\n\{{: #{anchor} \}}", out, flags=re.M).group(1)
        return re.findall(r"\]\(([^)]+)\)", line)

    assert used_on("olsson-2022") == ["real_heads.md", "induction.md"]
    assert used_on("elhage-2021") == ["induction.md"]
    for anchor in ("press-2022", "chen-2023", "bloc97-2023", "kazemnejad-2023"):
        assert "extrapolation.md" in used_on(anchor), anchor
    assert used_on("shah-2024") == ["flash_attention.md"]
