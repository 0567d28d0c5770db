// Runs docs/javascripts/generator.js in node for tests/test_generator.py: reads a JSON list of
// {op, ...} requests on stdin, answers a JSON list of results on stdout. -Infinity is written
// as the string "-inf" (JSON has no infinities). No DOM: generator.js exposes its numerics only.
"use strict";
const fs = require("fs");
const path = require("path");
const vm = require("vm");

vm.runInThisContext(fs.readFileSync(path.join(__dirname, "../../docs/javascripts/generator.js"), "utf8"));
const G = globalThis.mhaGenerator;
const finite = (xs) => Array.from(xs, (v) => (v === -Infinity ? "-inf" : v));
const readLogits = (xs) => xs.map((v) => (v === "-inf" ? -Infinity : v));

async function answer(r, model) {
  switch (r.op) {
    case "pcg": {
      const rng = new G.Pcg32(BigInt(r.seed), BigInt(r.stream)) // decimal strings: JSON numbers stop at 2**53;
      return Array.from({ length: r.n }, () => rng.nextU32());
    }
    case "forward": // the full pass, every position's logits (T, V)
      return Array.from(G.forward(model, r.tokens, true));
    case "cached": { // one step per token with the cache: the logits after each (T, V)
      const cache = G.newCache(model), out = [];
      for (const t of r.tokens) out.push(...G.step(model, cache, t));
      return out;
    }
    case "filter":
      return r.rows.map((row) => finite(G.filterLogits(readLogits(row), r.options)));
    case "sample": {
      const rng = new G.Pcg32(r.seed);
      return r.rows.map((row) => G.sampleNext(readLogits(row), rng, r.options));
    }
    case "refused": { // the error message filterLogits throws, or null when it returns
      try { G.filterLogits(readLogits(r.row), r.options); return null; } catch (err) { return String(err.message); }
    }
    case "generate":
      return G.generateSync(model, r.prompt, r.n_new, r.options).ids;
    case "check":
      return G.checkRequest(model, r.prompt, r.n_new);
    case "counted":
      return r.n.map((n) => G.counted(n, r.noun));
    default:
      throw new Error(`unknown op ${r.op}`);
  }
}

(async () => {
  const requests = JSON.parse(fs.readFileSync(0, "utf8"));
  const payloadFile = requests.find((r) => r.op === "load");
  const model = payloadFile ? await G.loadModel(JSON.parse(fs.readFileSync(payloadFile.path, "utf8"))) : null;
  const out = [];
  for (const r of requests) out.push(r.op === "load" ? null : await answer(r, model));
  process.stdout.write(JSON.stringify(out));
})().catch((err) => { console.error(err.stack || String(err)); process.exit(1); });
