// Render TeX to KaTeX HTML for hooks/site_math.py: one process per site build.
//
// stdin:  a JSON list of [tex, display] pairs (display: true for \[ \], false for \( \))
// stdout: a JSON list, one entry per input, in order: {"html": "..."} or {"error": "..."}
//
// node resolves `katex` from the project's node_modules/ (next to hooks/). Errors are
// reported, for the build to fail with the page and the formula, never drawn in red on
// a page (throwOnError); `strict: "ignore"` keeps KaTeX's notes on LaTeX compatibility
// (which the browser printed to its console) out of the build log.
"use strict";

const katex = require("katex");

const OPTIONS = { throwOnError: true, strict: "ignore", output: "htmlAndMathml" };

function render([tex, display]) {
  try {
    return { html: katex.renderToString(tex, { ...OPTIONS, displayMode: display }) };
  } catch (err) {
    return { error: String(err && err.message ? err.message : err) };
  }
}

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", () => {
  process.stdout.write(JSON.stringify(JSON.parse(input).map(render)));
});
