// Accessibility fix-ups of the theme's markup, run on every page (instant navigation too):
// - the search overlay is a dialog and needs a name;
// - a box that scrolls sideways (a wide table or formula on a small screen) must be
//   reachable with the keyboard, so it becomes a focusable, labelled region (checked again
//   once the fonts have loaded: KaTeX's fonts widen formulas after the first check).
// - a table, display formula or code block that scrolls sideways shows that it does (extra.css
//   draws the cues): its box gets .mha-scrolls, .mha-more-left / .mha-more-right while there is
//   more on that side (kept up to date as it scrolls and as its size changes), and a table or
//   formula a hint line (a code block none: its text is what the copy button copies).
// All boxes are measured first and marked after: a change of `role` can restyle the page,
// and measuring again after each one would lay out the whole page once per box. Boxes in a
// closed <details> are not laid out at all until it opens (measuring one would force that
// layout for nothing), so they are measured when their <details> opens. The page is measured
// once render_rest.js has laid all of it out (measuring a block it has not reached yet would
// lay that block out early, outside its slices).
const MHA_BOXES = ".md-typeset__scrollwrap, .md-typeset .arithmatex, .jp-OutputArea-output pre, .highlight pre, .highlight-ipynb";
const mhaRegion = (box) => {
  box.setAttribute("tabindex", "0");
  box.setAttribute("role", "region");
  box.setAttribute("aria-label", box.querySelector("table") ? "Scrollable table" : "Scrollable content");
};
const mhaA11y = (root = document) => {
  const search = document.querySelector(".md-search[role=dialog]");
  if (search && !search.hasAttribute("aria-label")) search.setAttribute("aria-label", "Search");
  const boxes = Array.from(root.querySelectorAll(MHA_BOXES)).filter((box) => !box.closest("details:not([open])"));
  const wide = boxes.filter((box) => !box.hasAttribute("tabindex") && box.scrollWidth > box.clientWidth);
  for (const box of wide) mhaRegion(box);
};

// Scroll cues. Only classes change (and a hint is added once, in space the box keeps free), so
// marking a box never moves the page. A box is measured when it is first observed and again
// whenever its size changes (a window resized, a <details> opened); fonts that widen the
// formulas once loaded are handled by the second pass below.
const MHA_CUED = ".md-typeset__scrollwrap, .md-typeset div.arithmatex, .md-typeset pre > code";
const mhaCue = (boxes) => {
  const seen = boxes.filter((box) => box.isConnected).map((box) => {
    const more = box.scrollWidth - box.clientWidth;
    return [box, more > 1, box.scrollLeft > 1, box.scrollLeft < more - 1];
  });
  for (const [box, wide, left, right] of seen) {
    box.classList.toggle("mha-scrolls", wide);
    box.classList.toggle("mha-more-left", wide && left);
    box.classList.toggle("mha-more-right", wide && right);
    if (wide && !box.hasAttribute("tabindex")) mhaRegion(box); // became wide after the first check
    if (wide && box.matches("code") && !box.mhaCued) { // shades only: no hint inside copied text
      box.mhaCued = true;
      box.addEventListener("scroll", () => mhaCue([box]), { passive: true });
    } else if (wide && !box.matches("code") && !box.querySelector(":scope > .mha-scroll-hint")) {
      const hint = document.createElement("span");
      hint.className = "mha-scroll-hint";
      hint.setAttribute("aria-hidden", "true"); // the box is already a region named "Scrollable ..."
      hint.textContent = "scroll for more →";
      box.append(hint);
      box.addEventListener("scroll", () => mhaCue([box]), { passive: true });
    }
  }
};
const mhaCueSizes = typeof ResizeObserver === "function"
  ? new ResizeObserver((entries) => mhaCue(entries.map((e) => e.target))) : null;
const mhaCueAll = () => {
  const boxes = Array.from(document.querySelectorAll(MHA_CUED));
  if (!mhaCueSizes) return mhaCue(boxes);
  mhaCueSizes.disconnect(); // the boxes of the page before (instant navigation)
  for (const box of boxes) mhaCueSizes.observe(box); // each is measured at its first report
};

// (at once if render_rest.js is missing: marking the boxes must not hang on it)
const mhaAfterRender = window.mhaWhenRendered || ((fn) => fn());
document$.subscribe(() => mhaAfterRender(() => {
  mhaA11y();
  mhaCueAll();
  if (document.fonts) document.fonts.ready.then(() => {
    mhaA11y();
    mhaCue(Array.from(document.querySelectorAll(MHA_CUED)));
  });
}));
// `toggle` does not bubble: listen in the capture phase, once for every page
document.addEventListener("toggle", (e) => {
  if (e.target instanceof HTMLDetailsElement && e.target.open) mhaA11y(e.target);
}, true);
