// Accessibility fix-ups of the theme's markup, run on every page (instant navigation too):
// - the search overlay is a dialog and needs a name;
// - a box that scrolls sideways (a wide table or formula on a small screen) must be
//   reachable with the keyboard, so it becomes a focusable, labelled region (checked again
//   once the fonts have loaded: KaTeX's fonts widen formulas after the first check).
const mhaA11y = () => {
  const search = document.querySelector(".md-search[role=dialog]");
  if (search && !search.hasAttribute("aria-label")) search.setAttribute("aria-label", "Search");
  document.querySelectorAll(".md-typeset__scrollwrap, .md-typeset .arithmatex, .jp-OutputArea-output pre, .highlight pre, .highlight-ipynb").forEach((box) => {
    if (box.scrollWidth > box.clientWidth && !box.hasAttribute("tabindex")) {
      box.setAttribute("tabindex", "0");
      box.setAttribute("role", "region");
      box.setAttribute("aria-label", box.querySelector("table") ? "Scrollable table" : "Scrollable content");
    }
  });
};
document$.subscribe(() => {
  mhaA11y();
  if (document.fonts) document.fonts.ready.then(mhaA11y);
});
