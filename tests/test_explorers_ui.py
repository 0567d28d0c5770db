"""The explorers as a reader uses them: reset, cell readouts, keyboard, live region, layout, axes.

tests/test_browser.py checks that the explorers compute the same numbers as mhalib; this
module checks what a reader sees and does with them (pages heads, rope, sinusoidal):

- heads: the reset button brings back tau = sqrt(2) exactly; pointing at or focusing a
  cell shows its query, key and weight (expected values computed here from mhalib's
  softmax and split_heads); arrow keys move a single tab stop; the colour scale is fixed
  0..1 with its legend (or per map); three maps in one row on a desktop, stacked on a phone;
- every control and cell shows a focus ring when reached with the keyboard;
- each explorer has one live region, and it says one short line per step;
- RoPE: the same-offset table has only positions >= 0, numbers with four decimals, and
  Material's table style;
- sinusoidal: axis ticks at the cell centres, a colour bar from -1 to +1 with the static
  figure's colour map (matplotlib's PuOr_r), and a readout of the focused cell.
"""
from __future__ import annotations

import contextlib
import math
import re
from decimal import ROUND_CEILING, Decimal

import numpy as np
import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout


pytestmark = [pytest.mark.build, pytest.mark.browser]

PRESETS = ("Identity", "Swap K blocks", "Head 2 flipped", "Random")
MAP_KEYS = ("single", "head1", "head2")


@pytest.fixture(scope="module")
def tabs(browser):
    """One tab per viewport width and colour scheme for the module's tests (a new tab per test
    starts a renderer process each time, which cost more than the page). Each test loads its own
    page in it, a fresh document: nothing it did stays for the next test."""
    made: dict = {}

    def tab(width: int, scheme: str):
        if (width, scheme) not in made:
            ctx = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)
            made[width, scheme] = ctx.new_page()
        return made[width, scheme]

    yield tab
    for page in made.values():
        page.context.close()


@pytest.fixture
def open_page(tabs):  # noqa: F811
    """open_page(url, width=1280, scheme="light") -> a Playwright page; fails on page errors."""
    used, errors = [], []
    on_error = lambda e: errors.append(str(e))  # noqa: E731
    on_console = lambda m: errors.append(m.text) if m.type == "error" else None  # noqa: E731

    def go(url, width=1280, scheme="light"):
        page = tabs(width, scheme)
        if page not in used:
            page.on("pageerror", on_error)
            page.on("console", on_console)
            used.append(page)
        page.goto(url, wait_until="load")  # the explorer's readiness, not an idle network, is what the tests need
        page.wait_for_selector(".mha-explorer-ui[data-ready]")
        return page

    yield go
    for page in used:  # the page ends: its tab goes blank, the pointer to a corner, its listeners off
        page.goto("about:blank")
        page.mouse.move(0, 0)
        page.remove_listener("pageerror", on_error)
        page.remove_listener("console", on_console)
    assert not errors, errors


# ---- expected values, from mhalib's building blocks (not from examples.heads_in_action) ----

def expected_maps(preset: str, tau: float) -> dict[str, np.ndarray]:
    """single = softmax(Q K^T / tau) over all four dims; head h over its two columns."""
    import mhalib
    from mhalib import examples

    ex = examples.the_cat_sat_down()
    w = examples.heads_preset(preset)
    Q, K = ex["X"] @ w["W_Q"], ex["X"] @ w["W_K"]  # (T, 4)
    q_heads, k_heads = mhalib.split_heads(Q, 2), mhalib.split_heads(K, 2)  # (T, 4) -> (2, T, 2)
    return {"single": mhalib.softmax(Q @ K.T / tau),
            "head1": mhalib.softmax(q_heads[0] @ k_heads[0].T / tau),
            "head2": mhalib.softmax(q_heads[1] @ k_heads[1].T / tau)}


def shown_maps(page) -> np.ndarray:
    return np.array(page.eval_on_selector_all(".mha-maps table", """tables => tables.map(t =>
        Array.from(t.querySelectorAll('tbody tr')).map(r => Array.from(r.querySelectorAll('td')).map(td => Number(td.dataset.value))))"""))


#: The colour behind the explorers: the first ancestor with a background of its own.
PAGE_BG = """(() => {
    for (let e = document.querySelector('.mha-explorer-ui'); e; e = e.parentElement) {
        const c = getComputedStyle(e).backgroundColor;
        if (c !== 'transparent' && !/^rgba\\(.*, 0\\)$/.test(c)) return c;
    }
    return 'rgb(255, 255, 255)';
})()"""


def rgb(text: str) -> np.ndarray:
    return np.array([float(x) for x in re.findall(r"[\d.]+", text)[:3]])


def test_the_expected_maps_are_rows_of_weights():
    """The test's own expectation: rows sum to 1, the heads differ from the single head, and
    mhalib's example function (a second path through scaled_dot_product_attention) agrees."""
    from mhalib import examples

    for preset in PRESETS:
        m = expected_maps(preset, 0.9)
        for key in MAP_KEYS:
            np.testing.assert_allclose(m[key].sum(axis=1), 1.0, atol=1e-12)
            np.testing.assert_allclose(m[key], examples.heads_in_action(preset, 0.9)[key], atol=1e-12)
    m = expected_maps("Identity", math.sqrt(2))
    assert not np.allclose(m["single"], m["head1"])


# ---- heads explorer -------------------------------------------------------------------

def test_reset_restores_tau_sqrt2_exactly(open_page, site_url):  # noqa: F811
    page = open_page(site_url + "heads/")
    # the maps start at sqrt(2) itself, which the slider's step holds as 1.41: the readout says
    # "≈ 1.41" (it said "1.41"), a value on the step reads as it is
    assert page.text_content(".mha-explorer-ui output") == "≈ 1.41"
    page.select_option(".mha-explorer-ui select >> nth=0", "Head 2 flipped")
    page.fill(".mha-explorer-ui input[type=range]", "0.5")
    assert float(page.eval_on_selector(".mha-explorer-ui", "ui => ui.dataset.tau")) == 0.5
    assert page.text_content(".mha-explorer-ui output") == "0.50"
    np.testing.assert_allclose(shown_maps(page), [expected_maps("Head 2 flipped", 0.5)[k] for k in MAP_KEYS], atol=1e-12)

    reset = page.get_by_role("button", name=re.compile("Reset"))
    assert "√2" in reset.text_content()
    reset.click()
    # the slider snaps to its step (1.41), the maps use sqrt(2) itself
    assert float(page.eval_on_selector(".mha-explorer-ui", "ui => ui.dataset.tau")) == math.sqrt(2)
    assert page.text_content(".mha-explorer-ui output") == "≈ 1.41"
    page.wait_for_function("document.querySelector('.mha-explorer-ui [aria-live]').textContent.includes('≈')", polling=100)
    assert page.text_content(".mha-explorer-ui [aria-live]").startswith("Head 2 flipped, tau ≈ 1.41: ")
    np.testing.assert_allclose(shown_maps(page), [expected_maps("Head 2 flipped", math.sqrt(2))[k] for k in MAP_KEYS],
                               atol=1e-12)
    assert page.input_value(".mha-explorer-ui select >> nth=0") == "Head 2 flipped"  # only tau is reset


def test_focusing_a_cell_shows_query_key_and_weight(open_page, site_url):  # noqa: F811
    page = open_page(site_url + "heads/")
    page.select_option(".mha-explorer-ui select >> nth=0", "Swap K blocks")
    tokens = ["The", "cat", "sat", "down"]
    expected = expected_maps("Swap K blocks", math.sqrt(2))

    # one tab stop per map; the arrow keys move it
    grids = page.locator(".mha-maps table")
    assert grids.count() == 3
    for g in range(3):
        assert grids.nth(g).get_attribute("role") == "grid"
        assert grids.nth(g).locator("td[tabindex='0']").count() == 1
    grids.nth(1).locator("td[tabindex='0']").focus()
    for key in ("ArrowDown", "ArrowDown", "ArrowRight", "ArrowRight", "ArrowRight", "ArrowLeft"):
        page.keyboard.press(key)
    focused = page.evaluate("({row: +document.activeElement.dataset.row, col: +document.activeElement.dataset.col, "
                            "tab: document.activeElement.tabIndex})")
    assert focused == {"row": 2, "col": 2, "tab": 0}
    assert grids.nth(1).locator("td[tabindex='0']").count() == 1

    tip = page.locator(".mha-tip")
    assert tip.is_visible()
    w = expected["head1"][2][2]
    assert tip.get_attribute("data-map") == "head1"
    assert (tip.get_attribute("data-query"), tip.get_attribute("data-key")) == (tokens[2], tokens[2])
    assert float(tip.get_attribute("data-weight")) == pytest.approx(w, abs=1e-12)
    text = tip.text_content()
    assert "head 1" in text and "query “sat”" in text and "key “sat”" in text and f"weight {w:.4f}" in text
    # a screen reader hears the same line: the focused cell is described by the tip
    assert page.evaluate("document.getElementById(document.activeElement.getAttribute('aria-describedby')) === "
                         "document.querySelector('.mha-tip')")

    # moving tau updates the tip of the focused cell
    page.fill(".mha-explorer-ui input[type=range]", "0.8")
    grids.nth(1).locator("td[tabindex='0']").focus()
    assert float(tip.get_attribute("data-weight")) == pytest.approx(expected_maps("Swap K blocks", 0.8)["head1"][2][2],
                                                                     abs=1e-12)

    # the pointer: hovering a cell of head 2 shows that cell
    grids.nth(2).locator("tbody tr").nth(3).locator("td").nth(0).hover()
    assert (tip.get_attribute("data-map"), tip.get_attribute("data-query"), tip.get_attribute("data-key")) == \
        ("head2", "down", "The")
    assert float(tip.get_attribute("data-weight")) == pytest.approx(expected_maps("Swap K blocks", 0.8)["head2"][3][0],
                                                                     abs=1e-12)
    # the tip sits next to the cell it describes
    cell = grids.nth(2).locator("tbody tr").nth(3).locator("td").nth(0).bounding_box()
    box = tip.bounding_box()
    assert abs((box["y"] + box["height"]) - cell["y"]) < 12 or abs(box["y"] - (cell["y"] + cell["height"])) < 12


def test_colour_scale_fixed_with_legend_or_per_map(open_page, site_url):  # noqa: F811
    from matplotlib import colormaps

    page = open_page(site_url + "heads/")
    ticks = page.eval_on_selector_all(".mha-legend-bar .mha-tick", "ts => ts.map(t => t.textContent)")
    assert ticks == ["0", "0.25", "0.5", "0.75", "1"]
    assert "attention weight" in page.text_content(".mha-legend-bar")

    def colours():
        return page.eval_on_selector_all(".mha-maps td", "tds => tds.map(td => [Number(td.dataset.value), "
                                                         "getComputedStyle(td).backgroundColor])")

    viridis = colormaps["viridis"]
    for value, bg in colours():  # fixed: the colour of a weight is viridis(weight) whatever tau is
        assert np.abs(rgb(bg) - np.array(viridis(value)[:3]) * 255).max() < 10, (value, bg)
    page.fill(".mha-explorer-ui input[type=range]", "0.3")
    for value, bg in colours():
        assert np.abs(rgb(bg) - np.array(viridis(value)[:3]) * 255).max() < 10, (value, bg)

    page.select_option(".mha-explorer-ui select >> nth=1", "each")
    maps = shown_maps(page)
    scales = page.eval_on_selector_all(".mha-maps .mha-cap-scale", "s => s.map(x => x.textContent)")
    # the scale's top, a bound: rounded up by hand (to nearest it read 0.37 for 0.3722: pass fifty-three)
    assert scales == [f"colour 0 to {Decimal(float(m.max())).quantize(Decimal('0.01'), rounding=ROUND_CEILING)}"
                      for m in maps]
    for value, bg in colours():
        top = max(m.max() for m in maps if value in m)
        assert np.abs(rgb(bg) - np.array(viridis(value / top)[:3]) * 255).max() < 10
    assert page.eval_on_selector_all(".mha-legend-bar .mha-tick", "ts => ts.map(t => t.textContent)") == ["0", "its largest"]


@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_heads_layout_one_row_on_desktop_stacked_on_a_phone(open_page, site_url, width, scheme):  # noqa: F811
    page = open_page(site_url + "heads/", width=width, scheme=scheme)
    boxes = [page.locator(".mha-maps table").nth(i).bounding_box() for i in range(3)]
    if width == 1280:
        assert max(b["y"] for b in boxes) - min(b["y"] for b in boxes) < 1  # one row
        assert boxes[0]["x"] < boxes[1]["x"] < boxes[2]["x"]
    else:
        assert boxes[0]["y"] + boxes[0]["height"] <= boxes[1]["y"] and boxes[1]["y"] + boxes[1]["height"] <= boxes[2]["y"]
    # nothing sticks out of the widget, captions break only between words (one line each here)
    assert page.eval_on_selector(".mha-explorer-ui", "ui => ui.scrollWidth - ui.clientWidth") <= 0
    lines = page.eval_on_selector_all(".mha-maps .mha-cap-title", "s => s.map(x => x.getClientRects().length)")
    assert lines == [1, 1, 1]
    # the smallest text in the widget stays readable
    smallest = page.evaluate("""Math.min(...Array.from(document.querySelectorAll('.mha-explorer-ui *'))
        .filter(e => e.childNodes.length && Array.from(e.childNodes).some(n => n.nodeType === 3 && n.textContent.trim()))
        .filter(e => e.offsetParent !== null)
        .map(e => parseFloat(getComputedStyle(e).fontSize)))""")
    assert smallest >= 11, smallest
    # text colour follows the scheme: the tick labels contrast with the page
    fg = page.evaluate("getComputedStyle(document.querySelector('.mha-legend-bar .mha-tick')).color")
    bg = page.evaluate(PAGE_BG)
    assert contrast(rgb(fg), rgb(bg)) >= 4.5, (fg, bg)


def contrast(a: np.ndarray, b: np.ndarray) -> float:
    def lum(c):
        c = c / 255
        c = np.where(c <= 0.03928, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
        return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]
    hi, lo = sorted([lum(a), lum(b)], reverse=True)
    return (hi + 0.05) / (lo + 0.05)


# ---- every explorer: keyboard and live region -----------------------------------------------

@pytest.mark.parametrize("url", ["heads/", "rope/", "sinusoidal/"])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_control_shows_a_focus_ring(open_page, site_url, url, scheme):  # noqa: F811
    page = open_page(site_url + url, scheme=scheme)
    controls = page.eval_on_selector_all(  # name each control, to know which ones the Tab key reached
        ".mha-explorer-ui :is(input, select, button, [tabindex='0'])",
        "cs => cs.map((c, i) => { c.dataset.control = c.tagName + i; return c.dataset.control; })")
    assert len(controls) >= 3
    # reach the first control with the keyboard (Tab from the one before), then Tab through all
    page.locator(".mha-explorer-ui :is(input, select, button, [tabindex='0'])").first.focus()
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Tab")
    seen = []
    for _ in range(len(controls)):
        state = page.evaluate("""(() => {
            const a = document.activeElement, s = getComputedStyle(a);
            return {name: a.dataset.control, inside: !!a.closest('.mha-explorer-ui'),
                    style: s.outlineStyle, width: parseFloat(s.outlineWidth), colour: s.outlineColor};
        })()""")
        state["bg"] = page.evaluate(PAGE_BG)
        assert state["inside"], (url, seen, state)
        assert state["style"] == "solid" and state["width"] >= 2, state
        assert contrast(rgb(state["colour"]), rgb(state["bg"])) >= 3, state
        seen.append(state["name"])
        page.keyboard.press("Tab")
    assert sorted(seen) == sorted(controls)
    assert not page.evaluate("!!document.activeElement.closest('.mha-explorer-ui')")  # and out again


@pytest.mark.parametrize("url, step, says", [
    ("heads/", "ArrowRight", r"^Identity, tau 1\.42: largest weight single head \d\.\d\d, head 1 \d\.\d\d, head 2 \d\.\d\d$"),
    ("rope/", "ArrowRight", r"^m 1, n 3, offset 2: score -?\d\.\d{4}$"),
    ("sinusoidal/", "ArrowRight", r"^d model 18, 32 positions: wavelengths 6\.28 to \d+\.\d\d$"),
])
def test_the_live_region_says_one_short_line_per_step(open_page, site_url, url, step, says):  # noqa: F811
    page = open_page(site_url + url)
    live = page.locator(".mha-explorer-ui [aria-live]")
    assert live.count() == 1  # one live region per explorer, and no table inside it
    assert live.locator("table").count() == 0
    slider = page.locator(".mha-explorer-ui input[type=range]").first
    if url == "rope/":
        slider.fill("0.5")
        slider = page.locator(".mha-explorer-ui input[type=range]").nth(1)
        slider.fill("0")
    slider.focus()
    page.keyboard.press(step)
    # the set-up above may have spoken already: wait for the line about this step (or time out
    # quietly and let the assertion show what was said)
    with contextlib.suppress(PlaywrightTimeout):
        page.wait_for_function("re => new RegExp(re).test(document.querySelector('.mha-explorer-ui [aria-live]').textContent)",
                               arg=says, polling=100, timeout=5000)
    text = live.text_content()
    assert "\n" not in text and len(text) <= 90, text
    assert re.match(says, text), text
    # several steps in a row: still one line, about the last step
    for _ in range(3):
        page.keyboard.press(step)
    page.wait_for_timeout(400)
    assert "\n" not in live.text_content() and len(live.text_content()) <= 90


def test_live_heads_summary_gives_the_largest_weights(open_page, site_url):  # noqa: F811
    page = open_page(site_url + "heads/")
    page.fill(".mha-explorer-ui input[type=range]", "0.7")
    page.wait_for_function("document.querySelector('.mha-explorer-ui [aria-live]').textContent.length > 0", polling=100)
    m = expected_maps("Identity", 0.7)
    assert page.text_content(".mha-explorer-ui [aria-live]") == (
        f"Identity, tau 0.70: largest weight single head {m['single'].max():.2f}, "
        f"head 1 {m['head1'].max():.2f}, head 2 {m['head2'].max():.2f}")


# ---- RoPE explorer ------------------------------------------------------------------------

@pytest.mark.parametrize("m, n", [(9, 2), (15, 0), (3, 3), (0, 15)])
def test_rope_same_offset_table(open_page, site_url, m, n):  # noqa: F811
    import mhalib

    page = open_page(site_url + "rope/")
    sliders = page.locator(".mha-explorer-ui input[type=range]")
    sliders.nth(0).fill("0.9")
    sliders.nth(1).fill(str(m))
    sliders.nth(2).fill(str(n))
    rows = page.eval_on_selector_all(".mha-same-offset tbody tr",
                                     "rs => rs.map(r => Array.from(r.querySelectorAll('td')).map(td => td.textContent))")
    assert len(rows) >= 3
    q, k = np.array([1.0, 0.3]), np.array([0.8, -0.5])
    for m2, n2, score in rows:
        assert re.fullmatch(r"\d+", m2) and re.fullmatch(r"\d+", n2), (m2, n2)  # no negative positions
        assert int(n2) - int(m2) == n - m
        assert re.fullmatch(r"-?\d\.\d{4}", score), score  # four decimals
        rq = mhalib.apply_rope(q[None], np.array([int(m2) * 0.9]))[0]  # d = 2: theta_0 = 1
        rk = mhalib.apply_rope(k[None], np.array([int(n2) * 0.9]))[0]
        assert score == f"{rq @ rk:.4f}"
    assert [int(r[0]) for r in rows] == sorted({int(r[0]) for r in rows})  # distinct, increasing
    assert f"n − m = {n - m}" in page.text_content(".mha-same-offset caption")

    # Material's table style: the site's tables are class-less tables inside .md-typeset
    style = page.eval_on_selector(".mha-same-offset table", """t => {
        const s = getComputedStyle(t), td = getComputedStyle(t.querySelector('tbody td:last-child'));
        return {cls: t.getAttribute('class'), border: s.borderTopStyle, typeset: !!t.closest('.md-typeset'),
                align: td.textAlign, nums: td.fontVariantNumeric};
    }""")
    assert style == {"cls": None, "border": "solid", "typeset": True, "align": "right", "nums": "tabular-nums"}


# ---- sinusoidal explorer ------------------------------------------------------------------------

@pytest.mark.parametrize("width", [1280, 390])
def test_pe_explorer_has_axes_ticks_and_a_colour_bar(open_page, site_url, width):  # noqa: F811
    page = open_page(site_url + "sinusoidal/", width=width)
    labels = page.eval_on_selector_all(".mha-pe-layout .mha-axis-label", "ls => ls.map(l => l.textContent)")
    assert sorted(labels) == sorted(["position", "dimension (even: sin, odd: cos)", "PE value"])
    for d_model, n_pos in ((16, 32), (128, 10), (2, 2), (64, 128)):
        page.locator(".mha-explorer-ui input[type=range]").nth(0).fill(str(d_model))
        page.locator(".mha-explorer-ui input[type=range]").nth(1).fill(str(n_pos))
        plot = page.locator(".mha-pe-plot").bounding_box()
        for axis, count, lo, size in (("x", d_model, plot["x"], plot["width"]), ("y", n_pos, plot["y"], plot["height"])):
            ticks = page.eval_on_selector_all(f".mha-ticks-{axis} .mha-tick", """ts => ts.map(t => {
                const r = t.getBoundingClientRect();
                return [t.textContent, r.left + r.width / 2, r.top + r.height / 2];
            })""")
            values = [int(t[0]) for t in ticks]
            assert 2 <= len(values) <= 14 and values[0] == 0 and values == sorted(values) and values[-1] <= count - 1
            steps = set(np.diff(values))
            assert len(steps) <= 1 and (not steps or steps.pop() in (1, 2, 5, 10, 20, 25, 50)), values
            for value, cx, cy in ticks:  # each label sits at its cell's centre
                centre = lo + (int(value) + 0.5) / count * size
                assert abs((cx if axis == "x" else cy) - centre) < 1.5, (axis, value, cx, cy, centre)
        assert f"= {d_model}, {n_pos} positions" in page.text_content(".mha-pe-title")
        pairs = page.locator(".mha-pe-figure ~ p.mha-readout").first.text_content()  # "1 pair", not "1 pairs" (pass 42)
        assert pairs.startswith(f"{d_model // 2} pair{'s' if d_model > 2 else ''}. Wavelengths"), pairs

    # the colour bar: -1 at the bottom, +1 at the top, matplotlib's PuOr_r like the static figure
    from matplotlib import colormaps

    cticks = page.eval_on_selector_all(".mha-ticks-c .mha-tick", """ts => ts.map(t => {
        const r = t.getBoundingClientRect();
        return [t.textContent, r.top + r.height / 2];
    })""")
    assert [t[0] for t in cticks] == ["−1.0", "−0.5", "0.0", "0.5", "1.0"]
    bar = page.locator(".mha-cbar-v").bounding_box()
    assert abs(cticks[0][1] - (bar["y"] + bar["height"])) < 2 and abs(cticks[-1][1] - bar["y"]) < 2
    puor_r = colormaps["PuOr_r"]
    shot = page.locator(".mha-cbar-v").screenshot()
    import io

    from PIL import Image

    img = np.asarray(Image.open(io.BytesIO(shot)).convert("RGB")).astype(float)
    h = img.shape[0]
    for frac in (0.1, 0.3, 0.5, 0.7, 0.9):  # fraction of the way up = (PE + 1) / 2
        got = img[int(round((1 - frac) * (h - 1))), img.shape[1] // 2]
        assert np.abs(got - np.array(puor_r(frac)[:3]) * 255).max() < 16, (frac, got)


def test_pe_cells_show_position_dimension_and_value(open_page, site_url):  # noqa: F811
    import mhalib
    from matplotlib import colormaps

    page = open_page(site_url + "sinusoidal/")
    page.locator(".mha-explorer-ui input[type=range]").nth(0).fill("16")
    page.locator(".mha-explorer-ui input[type=range]").nth(1).fill("32")
    pe = mhalib.sinusoidal_encoding(32, 16)

    plot = page.locator(".mha-pe-plot")
    plot.focus()
    for key in ("ArrowRight",) * 3 + ("ArrowDown",) * 5:
        page.keyboard.press(key)
    readout = page.locator(".mha-cell-readout")
    assert (readout.get_attribute("data-position"), readout.get_attribute("data-dimension")) == ("5", "3")
    assert float(readout.get_attribute("data-value")) == pytest.approx(pe[5, 3], abs=1e-12)
    # "≈": the readout rounds, and a value after "=" is exact (pass forty-two)
    assert readout.text_content() == f"position 5, dimension 3 (cos, pair 1): PE ≈ {pe[5, 3]:.4f}"
    page.wait_for_function("document.querySelector('.mha-explorer-ui [aria-live]').textContent.startsWith('position 5')", polling=100)

    # the pointer: the cell under it, and the canvas paints it in PuOr_r
    box = plot.bounding_box()
    x, y = box["x"] + (10 + 0.5) / 16 * box["width"], box["y"] + (20 + 0.5) / 32 * box["height"]
    page.mouse.move(x, y)
    assert (readout.get_attribute("data-position"), readout.get_attribute("data-dimension")) == ("20", "10")
    assert float(readout.get_attribute("data-value")) == pytest.approx(pe[20, 10], abs=1e-12)
    pixels = page.evaluate("""() => {
        const c = document.querySelector('.mha-pe-canvas'), ctx = c.getContext('2d');
        return [[5, 3], [20, 10], [0, 0], [31, 15]].map(([p, j]) =>
            Array.from(ctx.getImageData(Math.floor((j + 0.5) * c.width / 16), Math.floor((p + 0.5) * c.height / 32), 1, 1).data));
    }""")
    puor_r = colormaps["PuOr_r"]
    for (p, j), px in zip([(5, 3), (20, 10), (0, 0), (31, 15)], pixels):
        assert np.abs(np.array(px[:3]) - np.array(puor_r((pe[p, j] + 1) / 2)[:3]) * 255).max() < 16, (p, j, px)
