// The rest of a long page, rendered in short slices once its first screen is painted.
//
// Why: the longest pages hold thousands of elements (most of them typeset formulas). Left
// alone, the browser styles and lays out all of them before it paints anything: on a slow
// phone that is most of a second of blank screen, spent in one long task.
// How: extra.css gives the blocks of the article from its 13th child on (headings aside)
// `content-visibility: auto`, so the first paint lays out only what is on screen and keeps an
// estimated box for the rest. Once that paint is done, this script renders those blocks in
// reading order, a few milliseconds at a time, so no slice keeps the reader's input waiting.
// When it has finished, the page is laid out exactly as it would be without the rule: find-in-
// page, screen readers, hit-testing and scripts that measure all see every block. It then sets
// `data-mha-rendered` on <html> and fires `mha-rendered` on the document; `mhaWhenRendered(fn)`
// runs fn then (at once if the page is done). Without JavaScript a block renders when it
// nears the screen.
(() => {
  const SLICE_MS = 8;
  const root = document.documentElement;
  let run = 0;
  // The blocks the stylesheet marks and this script has not rendered yet: the stylesheet's
  // rule is the one place that says which blocks wait.
  const waiting = () => Array.from(document.querySelectorAll(".md-content__inner > *"))
    .filter((el) => el.style.contentVisibility !== "visible" && getComputedStyle(el).contentVisibility === "auto");

  window.mhaWhenRendered = (fn) => {
    if (root.hasAttribute("data-mha-rendered")) fn();
    else document.addEventListener("mha-rendered", () => fn(), { once: true });
  };

  // A link to a place further down (#id): the blocks before it get their true size now, before
  // the first paint, and the place is scrolled to; with their estimated sizes the browser would
  // land a screen or more away from it (a figure's "script" link, a section in the contents).
  function reachTarget() {
    let target = null;
    try {
      target = location.hash && document.getElementById(decodeURIComponent(location.hash.slice(1)));
    } catch (e) {
      return; // a malformed fragment: nothing to reach
    }
    if (!target) return;
    for (const el of waiting()) {
      el.style.contentVisibility = "visible";
      if (el === target || el.contains(target)) break;
    }
    target.scrollIntoView();
  }

  function start() {
    const mine = ++run;
    root.removeAttribute("data-mha-rendered");
    reachTarget();
    let blocks = [];
    const slice = () => {
      if (mine !== run) return; // a newer page (instant navigation) has taken over
      const t0 = performance.now();
      do {
        if (!blocks.length) blocks = waiting(); // again at the end: the theme may have replaced a block
        if (!blocks.length) {
          root.setAttribute("data-mha-rendered", "");
          document.dispatchEvent(new Event("mha-rendered"));
          return;
        }
        const el = blocks.shift();
        el.style.contentVisibility = "visible";
        void el.offsetHeight; // lay it out now, inside this slice, not all at the next frame
      } while (performance.now() - t0 < SLICE_MS);
      setTimeout(slice, 0);
    };
    requestAnimationFrame(() => setTimeout(slice, 0)); // after the next paint
  }

  if (typeof document$ !== "undefined") document$.subscribe(start); // Material's instant navigation
  else start();
})();
