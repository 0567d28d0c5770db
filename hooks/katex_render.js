// Render TeX to KaTeX HTML for hooks/site_math.py: one process per site build.
//
// stdin:  one JSON [tex, display] pair a line (display: true for \[ \], false for \( \))
// stdout: one JSON line per input line, in order: {"html": "..."} or {"error": "..."}
//
// Each line is answered as soon as it is read, so the build can hand formulas over while it
// still converts pages and read the answers when it needs them. node resolves `katex` from
// the project's node_modules/ (next to hooks/). Errors are reported, for the build to fail
// with the page and the formula, never drawn in red on a page (throwOnError);
// `strict: "ignore"` keeps KaTeX's notes on LaTeX compatibility (which the browser printed to
// its console) out of the build log.
"use strict";

const katex = require("katex");
const readline = require("readline");

const OPTIONS = { throwOnError: true, strict: "ignore", output: "htmlAndMathml" };

function render([tex, display]) {
  try {
    return { html: katex.renderToString(tex, { ...OPTIONS, displayMode: display }) };
  } catch (err) {
    return { error: String(err && err.message ? err.message : err) };
  }
}

readline.createInterface({ input: process.stdin, crlfDelay: Infinity }).on("line", (line) => {
  if (line.trim()) process.stdout.write(JSON.stringify(render(JSON.parse(line))) + "\n");
});
