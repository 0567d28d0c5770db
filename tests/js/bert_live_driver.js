// Runs docs/javascripts/bert_live.js in node for tests/test_bert_live.py: reads one JSON request
// {vocab: path of vocab.txt, tables: the tokenizer's character tables, max_tokens, texts: [...]}
// on stdin and writes, for each text, what the browser's tokenizer makes of it. No DOM:
// bert_live.js exposes its numerics only.
"use strict";
const fs = require("fs");
const path = require("path");
const vm = require("vm");

vm.runInThisContext(fs.readFileSync(path.join(__dirname, "../../docs/javascripts/bert_live.js"), "utf8"));
const B = globalThis.mhaBertLive;

const request = JSON.parse(fs.readFileSync(0, "utf8"));
const vocab = fs.readFileSync(request.vocab, "utf8").split("\n");
if (vocab[vocab.length - 1] === "") vocab.pop();
const tok = B.makeTokenizer(vocab, request.tables, { maxTokens: request.max_tokens });
const out = request.texts.map((text) => {
  const r = B.tokenize(tok, text);
  return { tokens: r.tokens, ids: r.ids, total: r.total, cut: r.cut, unknown: r.unknown, longWords: r.longWords };
});
process.stdout.write(JSON.stringify(out));
