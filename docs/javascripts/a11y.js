// Accessibility fix-ups of the theme's markup, run on every page (instant navigation too):
// - the search overlay is a dialog and needs a name;
// - a box that scrolls sideways (a wide table or formula on a small screen) must be
//   reachable with the keyboard, so it becomes a focusable, labelled region (checked again
//   once the fonts have loaded: KaTeX's fonts widen formulas after the first check).
// All boxes are measured first and marked after: a change of `role` can restyle the page,
// and measuring again after each one would lay out the whole page once per box. Boxes in a
// closed <details> are not laid out at all until it opens (measuring one would force that
// layout for nothing), so they are measured when their <details> opens. The page is measured
// once render_rest.js has laid all of it out (measuring a block it has not reached yet would
// lay that block out early, outside its slices).
const MHA_BOXES = ".md-typeset__scrollwrap, .md-typeset .arithmatex, .jp-OutputArea-output pre, .highlight pre, .highlight-ipynb";
const mhaA11y = (root = document) => {
  const search = document.querySelector(".md-search[role=dialog]");
  if (search && !search.hasAttribute("aria-label")) search.setAttribute("aria-label", "Search");
  const boxes = Array.from(root.querySelectorAll(MHA_BOXES)).filter((box) => !box.closest("details:not([open])"));
  const wide = boxes.filter((box) => !box.hasAttribute("tabindex") && box.scrollWidth > box.clientWidth);
  for (const box of wide) {
    box.setAttribute("tabindex", "0");
    box.setAttribute("role", "region");
    box.setAttribute("aria-label", box.querySelector("table") ? "Scrollable table" : "Scrollable content");
  }
};
// (at once if render_rest.js is missing: marking the boxes must not hang on it)
const mhaAfterRender = window.mhaWhenRendered || ((fn) => fn());
document$.subscribe(() => mhaAfterRender(() => {
  mhaA11y();
  if (document.fonts) document.fonts.ready.then(() => mhaA11y());
}));
// `toggle` does not bubble: listen in the capture phase, once for every page
document.addEventListener("toggle", (e) => {
  if (e.target instanceof HTMLDetailsElement && e.target.open) mhaA11y(e.target);
}, true);
