// Accessibility fix-ups of the theme's markup, run on every page (instant navigation too):
// - the search overlay is a dialog and needs a name;
// - a box that scrolls sideways (a wide table or formula on a small screen) must be
//   reachable with the keyboard, so it becomes a focusable, labelled region (checked again
//   once the fonts have loaded: KaTeX's fonts widen formulas after the first check).
// All boxes are measured first and marked after: a change of `role` can restyle the page,
// and measuring again after each one would lay out the whole page once per box.
const mhaA11y = () => {
  const search = document.querySelector(".md-search[role=dialog]");
  if (search && !search.hasAttribute("aria-label")) search.setAttribute("aria-label", "Search");
  const boxes = document.querySelectorAll(".md-typeset__scrollwrap, .md-typeset .arithmatex, .jp-OutputArea-output pre, .highlight pre, .highlight-ipynb");
  const wide = Array.from(boxes).filter((box) => !box.hasAttribute("tabindex") && box.scrollWidth > box.clientWidth);
  for (const box of wide) {
    box.setAttribute("tabindex", "0");
    box.setAttribute("role", "region");
    box.setAttribute("aria-label", box.querySelector("table") ? "Scrollable table" : "Scrollable content");
  }
};
document$.subscribe(() => {
  mhaA11y();
  if (document.fonts) document.fonts.ready.then(mhaA11y);
});
