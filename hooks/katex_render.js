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

// KaTeX draws a command it does not trust in red instead of failing (throwOnError does not
// cover it). The one trusted is \htmlData: the build writes a value inside a formula as
// \htmlData{source=SCRIPT PATH, prov=KEY}{0.84} (hooks/provenance.py), a span with those
// data- attributes; any other (\href, \htmlClass, \includegraphics, ...) fails the build.
// \htmlData{source=..., prov=...}{TEXT} -> TEXT, TEXT's braces matched (a number's {,} stays)
function unwrap(html) {
  let out = "", pos = 0, i;
  while ((i = html.indexOf("\\htmlData{source=", pos)) >= 0) {
    const j = html.indexOf("}{", i);
    if (j < 0) break;
    let depth = 1, k = j + 2;
    for (; k < html.length && depth; k++) {
      if (html[k - 1] === "\\") continue;
      if (html[k] === "{") depth++;
      else if (html[k] === "}") depth--;
    }
    if (depth) break;
    out += html.slice(pos, i) + html.slice(j + 2, k - 1);
    pos = k;
  }
  return out + html.slice(pos);
}

function render([tex, display]) {
  const refused = [];
  const trust = (context) => context.command === "\\htmlData" || (refused.push(context.command), false);
  try {
    const html = katex.renderToString(tex, { ...OPTIONS, displayMode: display, trust });
    if (refused.length) return { error: `${refused.join(", ")} is not allowed in the course's formulas` };
    // the formula's TeX, kept for screen readers and for copying, without the value's wrapper
    return { html: unwrap(html) };
  } catch (err) {
    return { error: String(err && err.message ? err.message : err) };
  }
}

readline.createInterface({ input: process.stdin, crlfDelay: Infinity }).on("line", (line) => {
  if (line.trim()) process.stdout.write(JSON.stringify(render(JSON.parse(line))) + "\n");
});
