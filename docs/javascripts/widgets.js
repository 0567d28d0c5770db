// Loads the explorers' scripts on the pages that have an explorer, and only there.
//
// explorers.js (the heads, RoPE and sinusoidal explorers) and bert_viewer.js (the attention
// viewers) are 19 KB compressed that four pages of the course use. Every page links this small
// script instead; when the page holds an explorer (an element with data-explorer) it appends
// explorers.js, then, for a viewer ("bert" or "tiny"), bert_viewer.js, which registers with
// it; for the live decoders of the extrapolation page ("extrapolation") tiny_decoder.js,
// which registers with it too; for the live generator ("generator", on the KV-cache page)
// generator.js alone, which fetches its model when the reader first asks for text; for the live
// real model ("bert_live", on the viewer page) bert_live.js, likewise. It checks
// again after each instant navigation (the theme swaps the article without loading the new
// page's scripts), so a reader who reaches an explorer from another page
// gets it too. A script that fails to load leaves the page's static figure in place, and the
// error is reported, not swallowed.
(function () {
  "use strict";
  const here = document.currentScript.src; // .../javascripts/widgets.js: the others sit beside it
  const NEEDS = [
    ["explorers.js", '[data-explorer]:not([data-explorer="generator"])'],
    ["bert_viewer.js", '[data-explorer="bert"], [data-explorer="tiny"]'], // after explorers.js
    ["tiny_decoder.js", '[data-explorer="extrapolation"]'], // the kback decoders, run live (after explorers.js)
    ["generator.js", '[data-explorer="generator"]'], // on its own: it does not register with explorers.js
    ["bert_live.js", '[data-explorer="bert_live"]'], // the real model on the reader's sentence: on its own too
  ];
  const loaded = {};

  function append(name) {
    if (!loaded[name]) {
      loaded[name] = new Promise((resolve, reject) => {
        const script = document.createElement("script");
        script.src = new URL(name, here).href;
        script.onload = resolve;
        script.onerror = () => reject(new Error(`widgets.js: ${script.src} did not load`));
        document.body.appendChild(script);
      });
    }
    return loaded[name];
  }

  function check() {
    const wanted = NEEDS.filter(([, selector]) => document.querySelector(selector)).map(([name]) => name);
    // one after the other, in NEEDS order: a later script registers with an earlier one
    wanted.reduce((done, name) => done.then(() => append(name)), Promise.resolve())
      .catch((err) => setTimeout(() => { throw err; }));
  }

  if (typeof document$ !== "undefined") document$.subscribe(check); // Material's instant navigation
  else if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", check);
  else check();
})();
