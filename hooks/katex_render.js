// Render TeX to KaTeX HTML for hooks/site_math.py: one process per site build.
//
// stdin:  a JSON list of [tex, display] pairs (display: true for \[ \], false for \( \))
// stdout: a JSON list, one entry per input, in order: {"html": "..."} or {"error": "..."}
//
// Run from the project root (node resolves `katex` from node_modules/). The options are
// the ones the pages used to render with in the browser; errors are reported, never
// drawn in red on a page (throwOnError).
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
  if (process.argv.includes("--version")) {
    process.stdout.write(JSON.stringify({ katex: katex.version, options: OPTIONS }));
    return;
  }
  process.stdout.write(JSON.stringify(JSON.parse(input).map(render)));
});
