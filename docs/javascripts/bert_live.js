// all-MiniLM-L6-v2 in the reader's browser (page: look inside a real model), widget "bert_live".
//
// The viewer above the page's built-in sentences gains a text box: the model's own tokenizer
// (WordPiece, as the packaged tokenizer.json defines it) splits the reader's sentence, and the
// encoder runs here, in plain JavaScript, up to every head's attention weights. It is mhalib's
// forward pass (mhalib/models/bert.py) written again: embeddings, then per layer multi-head
// attention, LayerNorm, the feed-forward network with the exact (erf) GELU and LayerNorm again.
// The weights come from the payload the build wrote (figures/real_model/bert_live.py): word
// embeddings as 8-bit integers and the encoder's matrices as 10-bit ones, one scale per 32
// weights (mhalib/models/quantize.py). They are fetched only when the reader asks, once: the
// URL carries the payload's hash, so the browser keeps its copy until the model changes.
// The tests hold the tokenizer to the packaged one and the weights to mhalib's float32 forward
// pass (tests/test_bert_live.py), through window.mhaBertLive.
//
// Shapes: T tokens, D d_model, H heads, d = D / H, F d_ff, L layers. Matrices are stored as
// torch's nn.Linear keeps them, (N_out, K_in) row-major: y = x W^T + b.
(function (root) {
  "use strict";

  // ---- the tokenizer (tokenizer.json: BertNormalizer, BertPreTokenizer, WordPiece) -----------
  // What each character becomes comes from tables the build read from the packaged tokenizer
  // (figures/real_model/bert_live.py: tokenizer_tables), not from this browser's Unicode data,
  // which may be of another version: the same text gives the same tokens in any browser.
  const DROP = 0, SPACE = 1, CJK = 2, HANGUL = 3, MAPPED = 4;

  // the entry of sorted [first, end, ...] ranges that holds cp, or null
  function findRange(ranges, cp) {
    let lo = 0, hi = ranges.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1, r = ranges[mid];
      if (cp < r[0]) hi = mid - 1;
      else if (cp >= r[1]) lo = mid + 1;
      else return r;
    }
    return null;
  }

  // a Hangul syllable's canonical decomposition: leading, vowel and trailing jamo
  function hangul(cp) {
    const s = cp - 0xac00, trail = 0x11a7 + (s % 28);
    return String.fromCodePoint(0x1100 + Math.floor(s / 588), 0x1161 + Math.floor((s % 588) / 28)) +
      (trail === 0x11a7 ? "" : String.fromCodePoint(trail));
  }

  // BertNormalizer, character by character: control characters dropped, whitespace to a space,
  // spaces around CJK ideographs, accents stripped, lower case (a final sigma stays σ).
  function normalize(tok, text) {
    let out = "";
    for (const ch of text) {
      const cp = ch.codePointAt(0), r = findRange(tok.runs, cp);
      if (!r) out += ch;
      else if (r[2] === SPACE) out += " ";
      else if (r[2] === CJK) out += ` ${ch} `;
      else if (r[2] === HANGUL) out += hangul(cp);
      else if (r[2] === MAPPED) out += tok.mapped.get(cp);
    }
    return out;
  }

  // BertPreTokenizer: split at spaces, and make each punctuation character a word of its own.
  function preTokenize(tok, text) {
    const words = [];
    let word = "";
    for (const ch of text) {
      if (ch === " ") {
        if (word) words.push(word);
        word = "";
      } else if (findRange(tok.punct, ch.codePointAt(0))) {
        if (word) words.push(word);
        words.push(ch);
        word = "";
      } else {
        word += ch;
      }
    }
    if (word) words.push(word);
    return words;
  }

  // WordPiece: the longest vocabulary entry from the left, then "##" + the longest continuation;
  // a word with no such split, or longer than maxChars characters, is one [UNK].
  function wordPiece(word, ids, maxChars) {
    const chars = Array.from(word);
    if (chars.length > maxChars) return null;
    const pieces = [];
    let start = 0;
    while (start < chars.length) {
      let end = chars.length, found = null;
      for (; end > start; end--) {
        const piece = (start > 0 ? "##" : "") + chars.slice(start, end).join("");
        if (ids.has(piece)) { found = piece; break; }
      }
      if (found === null) return null;
      pieces.push(found);
      start = end;
    }
    return pieces;
  }

  // A tokenizer over a vocabulary (tokens by id), the packaged tokenizer's character tables, its
  // special tokens (matched in the raw text, as typed) and its limits.
  function makeTokenizer(vocab, tables, options = {}) {
    const { maxTokens = 64, maxChars = 100, special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] } = options;
    const ids = new Map();
    vocab.forEach((t, i) => { if (!ids.has(t)) ids.set(t, i); });
    for (const t of ["[UNK]", "[CLS]", "[SEP]"])
      if (!ids.has(t)) throw new Error(`the vocabulary has no ${t}`);
    const escaped = special.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
    return { vocab, ids, maxTokens, maxChars, runs: tables.runs, punct: tables.punct,
      mapped: new Map(tables.map.map(([cp, out]) => [cp, out])), special: new RegExp(escaped.join("|"), "g") };
  }

  // text -> {tokens, ids, total, cut, unknown, longWords}: tokens with [CLS] and [SEP], at most
  // maxTokens of them (the pieces past maxTokens - 2 are cut, as the packaged tokenizer truncates);
  // total counts every token before the cut; unknown lists the words that became [UNK].
  function tokenize(tok, text) {
    if (typeof text !== "string") throw new TypeError(`text must be a string, got ${typeof text}`);
    const pieces = [], unknown = [], longWords = [];
    const addWords = (segment) => {
      for (const word of preTokenize(tok, normalize(tok, segment))) {
        const split = wordPiece(word, tok.ids, tok.maxChars);
        if (split) { pieces.push(...split); continue; }
        pieces.push("[UNK]");
        if (Array.from(word).length > tok.maxChars) longWords.push(word);
        else unknown.push(word);
      }
    };
    let last = 0;
    for (const m of text.matchAll(tok.special)) {
      addWords(text.slice(last, m.index));
      pieces.push(m[0]);
      last = m.index + m[0].length;
    }
    addWords(text.slice(last));
    const room = tok.maxTokens - 2, kept = pieces.slice(0, room);
    const tokens = ["[CLS]", ...kept, "[SEP]"];
    return {
      tokens, ids: tokens.map((t) => tok.ids.get(t)), total: pieces.length + 2,
      cut: pieces.length > room ? { kept: room, dropped: pieces.length - room, first: pieces[room] } : null,
      unknown, longWords,
    };
  }

  // ---- the payload (figures/real_model/bert_live.py: payload) -------------------------------
  function readPayload(buffer) {
    const bytes = new Uint8Array(buffer);
    const magic = String.fromCharCode(...bytes.subarray(0, 4));
    if (magic !== "MHAB") throw new Error(`the model file does not start with MHAB (got ${JSON.stringify(magic)})`);
    const headLength = new DataView(buffer).getUint32(4, true);
    const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + headLength)));
    if (header.format !== "mha-bert-live/1") throw new Error(`unknown model format ${header.format}`);
    const start = 8 + headLength;
    const section = (place) => {
      if (place.offset + place.bytes > buffer.byteLength - start) throw new Error("the model file is cut short");
      return start + place.offset;
    };
    const tensors = {};
    for (const t of header.tensors) {
      const n = t.shape.reduce((a, b) => a * b, 1);
      if (t.kind === "f32") {
        tensors[t.name] = new Float32Array(buffer, section(t.data), n);
      } else if (t.kind === "q") {
        const scale = new Float64Array(256); // the code's scale, 2 ** ((base + code - 1) / steps); 0: a zero group
        for (let c = 1; c < 256; c++) scale[c] = 2 ** ((t.base + c - 1) / header.scale_steps);
        tensors[t.name] = { shape: t.shape, bits: t.bits, group: t.group, scale,
          data: new Uint8Array(buffer, section(t.data), t.data.bytes), codes: new Uint8Array(buffer, section(t.codes), t.codes.bytes) };
      } else {
        throw new Error(`tensor ${t.name}: unknown kind ${t.kind}`);
      }
    }
    const vocab = new TextDecoder().decode(new Uint8Array(buffer, section(header.vocab), header.vocab.bytes)).split("\n");
    return { header, tensors, vocab };
  }

  // The integer of weight i of a quantized matrix (8 bits: int8; 10 bits: a low-byte plane, then
  // the high two bits of 4 weights per byte, stored as q + 512).
  function integerAt(t, i) {
    if (t.bits === 8) return (t.data[i] << 24) >> 24;
    const n = t.shape[0] * t.shape[1];
    return (t.data[i] | (((t.data[n + (i >> 2)] >> ((i & 3) * 2)) & 3) << 8)) - 512;
  }

  // A whole quantized matrix as float32, q * s, (N, K) row-major.
  function dequantize(t) {
    const [N, K] = t.shape, G = K / t.group, out = new Float32Array(N * K);
    for (let r = 0; r < N; r++) {
      for (let g = 0; g < G; g++) {
        const s = t.scale[t.codes[r * G + g]], o = r * K + g * t.group;
        for (let e = 0; e < t.group; e++) out[o + e] = integerAt(t, o + e) * s;
      }
    }
    return out;
  }

  // The model from the payload: every encoder matrix as float32; the word embeddings stay 8-bit
  // (11 MB instead of 45) and a row is decoded when a token needs it.
  function loadModel(buffer) {
    const { header, tensors, vocab } = readPayload(buffer);
    const c = header.config, w = {};
    for (const [name, t] of Object.entries(tensors)) w[name] = name === "word" || !t.bits ? t : dequantize(t);
    const rowOf = new Int32Array(vocab.length).fill(-1); // token id -> its row of the stored embeddings
    let row = 0, skip = 0;
    for (let id = 0; id < vocab.length; id++) {
      while (skip < header.skipped_rows.length && id >= header.skipped_rows[skip][1]) skip++;
      const s = header.skipped_rows[skip];
      if (!s || id < s[0]) rowOf[id] = row++;
    }
    if (row !== w.word.shape[0]) throw new Error(`${row} token rows expected, the model file holds ${w.word.shape[0]}`);
    if (vocab.length !== c.vocab_size) throw new Error(`the vocabulary lists ${vocab.length} tokens, the config says ${c.vocab_size}`);
    return { c, w, d: c.d_model / c.heads, rowOf, vocab,
      tokenizer: makeTokenizer(vocab, header.tokenizer,
        { maxTokens: c.max_tokens, maxChars: c.max_chars_per_word, special: header.special }) };
  }

  // ---- the forward pass (mhalib/models/bert.py: bert_forward) ---------------------------------
  // out[t, n] = b[n] + sum_k X[t, k] W[n, k] for t < T: X (T, K), W (N, K), out (T, N), N a
  // multiple of 4. A tile of 4 outputs by 4 tokens keeps 16 sums in registers, so each weight
  // and each input loaded serves four products (two to three times the speed of one sum at a time).
  function linear(X, T, K, W, N, b, out) {
    for (let n = 0; n < N; n += 4) {
      const w0 = n * K, w1 = w0 + K, w2 = w1 + K, w3 = w2 + K;
      const b0 = b[n], b1 = b[n + 1], b2 = b[n + 2], b3 = b[n + 3];
      let t = 0;
      for (; t + 4 <= T; t += 4) {
        const x0 = t * K, x1 = x0 + K, x2 = x1 + K, x3 = x2 + K;
        let c00 = 0, c01 = 0, c02 = 0, c03 = 0, c10 = 0, c11 = 0, c12 = 0, c13 = 0;
        let c20 = 0, c21 = 0, c22 = 0, c23 = 0, c30 = 0, c31 = 0, c32 = 0, c33 = 0;
        for (let k = 0; k < K; k++) {
          const a = W[w0 + k], bb = W[w1 + k], c = W[w2 + k], d = W[w3 + k];
          const p = X[x0 + k], q = X[x1 + k], r = X[x2 + k], s = X[x3 + k];
          c00 += p * a; c01 += p * bb; c02 += p * c; c03 += p * d;
          c10 += q * a; c11 += q * bb; c12 += q * c; c13 += q * d;
          c20 += r * a; c21 += r * bb; c22 += r * c; c23 += r * d;
          c30 += s * a; c31 += s * bb; c32 += s * c; c33 += s * d;
        }
        let o = t * N + n;
        out[o] = c00 + b0; out[o + 1] = c01 + b1; out[o + 2] = c02 + b2; out[o + 3] = c03 + b3; o += N;
        out[o] = c10 + b0; out[o + 1] = c11 + b1; out[o + 2] = c12 + b2; out[o + 3] = c13 + b3; o += N;
        out[o] = c20 + b0; out[o + 1] = c21 + b1; out[o + 2] = c22 + b2; out[o + 3] = c23 + b3; o += N;
        out[o] = c30 + b0; out[o + 1] = c31 + b1; out[o + 2] = c32 + b2; out[o + 3] = c33 + b3;
      }
      for (; t < T; t++) { // the last T mod 4 tokens, one at a time
        const x0 = t * K;
        let c0 = 0, c1 = 0, c2 = 0, c3 = 0;
        for (let k = 0; k < K; k++) {
          const p = X[x0 + k];
          c0 += p * W[w0 + k]; c1 += p * W[w1 + k]; c2 += p * W[w2 + k]; c3 += p * W[w3 + k];
        }
        const o = t * N + n;
        out[o] = c0 + b0; out[o + 1] = c1 + b1; out[o + 2] = c2 + b2; out[o + 3] = c3 + b3;
      }
    }
  }

  // each row of X (T, D), in place: gamma * (x - mean) / sqrt(var + eps) + beta (biased variance)
  function layerNorm(X, T, D, g, b, eps) {
    for (let t = 0; t < T; t++) {
      const o = t * D;
      let mean = 0;
      for (let i = 0; i < D; i++) mean += X[o + i];
      mean /= D;
      let v = 0;
      for (let i = 0; i < D; i++) v += (X[o + i] - mean) ** 2;
      const inv = 1 / Math.sqrt(v / D + eps);
      for (let i = 0; i < D; i++) X[o + i] = g[i] * ((X[o + i] - mean) * inv) + b[i];
    }
  }

  // erf by Abramowitz and Stegun 7.1.26, as mhalib.models.bert.erf; GELU(x) = x/2 (1 + erf(x / sqrt 2))
  function erf(x) {
    const t = 1 / (1 + 0.3275911 * Math.abs(x));
    const poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
    return Math.sign(x) * (1 - poly * Math.exp(-x * x));
  }
  const gelu = (x) => 0.5 * x * (1 + erf(x / Math.SQRT2));

  // Token ids (T,) -> every head's attention weights, (L, H, T, T) row-major (layer, head,
  // query, key), float32. Only what those weights need is computed: the last layer stops at them.
  function forward(m, ids) {
    const { layers: L, heads: H, d_model: D, d_ff: F, eps } = m.c, d = m.d, w = m.w, T = ids.length;
    if (T < 1 || T > m.c.max_tokens) throw new RangeError(`ids must hold 1 to ${m.c.max_tokens} tokens, got ${T}`);
    const X = new Float32Array(T * D), Q = new Float32Array(T * D), K = new Float32Array(T * D),
      V = new Float32Array(T * D), C = new Float32Array(T * D), Y = new Float32Array(T * D),
      Hid = new Float32Array(T * F), A = new Float32Array(L * H * T * T), row = new Float64Array(T);
    const word = w.word, G = D / word.group;
    ids.forEach((id, t) => { // x = E_word[id] + E_pos[t] + E_type[0]
      const r = m.rowOf[id];
      if (!Number.isInteger(id) || r === undefined || r < 0) throw new RangeError(`token id ${id} has no embedding`);
      for (let i = 0; i < D; i++) {
        const s = word.scale[word.codes[r * G + Math.floor(i / word.group)]];
        X[t * D + i] = ((word.data[r * D + i] << 24) >> 24) * s + w.pos[t * D + i] + w.type[i];
      }
    });
    layerNorm(X, T, D, w["ln.g"], w["ln.b"], eps);
    const scale = 1 / Math.sqrt(d);
    for (let l = 0; l < L; l++) {
      const last = l === L - 1;
      linear(X, T, D, w[`${l}.q.w`], D, w[`${l}.q.b`], Q);
      linear(X, T, D, w[`${l}.k.w`], D, w[`${l}.k.b`], K);
      if (!last) linear(X, T, D, w[`${l}.v.w`], D, w[`${l}.v.b`], V);
      for (let h = 0; h < H; h++) {
        for (let i = 0; i < T; i++) { // row i of head h: softmax(q_i K^T / sqrt(d)), the row's maximum subtracted
          let max = -Infinity;
          for (let j = 0; j < T; j++) {
            let s = 0;
            for (let e = 0; e < d; e++) s += Q[i * D + h * d + e] * K[j * D + h * d + e];
            row[j] = s * scale;
            if (row[j] > max) max = row[j];
          }
          let total = 0;
          for (let j = 0; j < T; j++) total += (row[j] = Math.exp(row[j] - max));
          const a = ((l * H + h) * T + i) * T;
          for (let j = 0; j < T; j++) A[a + j] = row[j] / total;
          if (last) continue;
          for (let e = 0; e < d; e++) { // context = the row's weights times V
            let s = 0;
            for (let j = 0; j < T; j++) s += A[a + j] * V[j * D + h * d + e];
            C[i * D + h * d + e] = s;
          }
        }
      }
      if (last) break;
      linear(C, T, D, w[`${l}.o.w`], D, w[`${l}.o.b`], Y); // x = LN(x + attention's output)
      for (let i = 0; i < T * D; i++) X[i] += Y[i];
      layerNorm(X, T, D, w[`${l}.ln1.g`], w[`${l}.ln1.b`], eps);
      linear(X, T, D, w[`${l}.f1.w`], F, w[`${l}.f1.b`], Hid); // x = LN(x + GELU(x W_1^T + b_1) W_2^T + b_2)
      for (let i = 0; i < T * F; i++) Hid[i] = gelu(Hid[i]);
      linear(Hid, T, F, w[`${l}.f2.w`], D, w[`${l}.f2.b`], Y);
      for (let i = 0; i < T * D; i++) X[i] += Y[i];
      layerNorm(X, T, D, w[`${l}.ln2.g`], w[`${l}.ln2.b`], eps);
    }
    return A;
  }

  // ---- head-type scores (mhalib/models/head_analysis.py: head_scores) ---------------------------
  const TYPES = ["previous token", "next token", "self", "to [CLS]", "to [SEP]", "to punctuation", "entropy"];
  const ASCII_PUNCT = new Set(Array.from("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"));

  // Weights (L, H, T, T) over tokens -> {type: [[score per head] per layer]}; "to punctuation" is
  // null throughout when no token is punctuation (mhalib: NaN, "missing").
  function headScores(A, tokens, L, H) {
    const T = tokens.length;
    if (T < 3) throw new RangeError(`need at least one token between [CLS] and [SEP], got ${T} tokens`);
    const punct = tokens.map((t) => ASCII_PUNCT.has(t));
    const anyPunct = punct.some(Boolean);
    const out = Object.fromEntries(TYPES.map((k) => [k, []]));
    for (let l = 0; l < L; l++) {
      const rows = Object.fromEntries(TYPES.map((k) => [k, []]));
      for (let h = 0; h < H; h++) {
        const at = (i, j) => A[((l * H + h) * T + i) * T + j];
        let prev = 0, next = 0, self = 0, cls = 0, sep = 0, pun = 0, ent = 0;
        for (let i = 0; i < T; i++) {
          if (i > 0) prev += at(i, i - 1);
          if (i < T - 1) next += at(i, i + 1);
          self += at(i, i);
          cls += at(i, 0);
          sep += at(i, T - 1);
          for (let j = 0; j < T; j++) {
            const a = at(i, j);
            if (punct[j]) pun += a;
            if (a > 0) ent -= a * Math.log(a);
          }
        }
        rows["previous token"].push(prev / (T - 1));
        rows["next token"].push(next / (T - 1));
        rows.self.push(self / T);
        rows["to [CLS]"].push(cls / T);
        rows["to [SEP]"].push(sep / T);
        rows["to punctuation"].push(anyPunct ? pun / T : null);
        rows.entropy.push(ent / T / Math.log(T));
      }
      for (const k of TYPES) out[k].push(rows[k]);
    }
    return out;
  }

  const now = () => (typeof performance !== "undefined" ? performance.now() : Date.now());

  // text -> everything the viewer shows: tokens, weights, scores, the tokenizer's notes and the time.
  function run(m, text) {
    const tk = tokenize(m.tokenizer, text);
    const t0 = now();
    const weights = forward(m, tk.ids);
    const ms = now() - t0;
    return { ...tk, text, weights, ms, scores: headScores(weights, tk.tokens, m.c.layers, m.c.heads) };
  }

  const api = { normalize, preTokenize, wordPiece, makeTokenizer, tokenize, readPayload, dequantize, integerAt,
    loadModel, forward, headScores, run, erf, TYPES };
  root.mhaBertLive = api;
  if (typeof document === "undefined") return; // node (tests): the numerics only

  // ---- the widget -------------------------------------------------------------------------
  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "text") node.textContent = v;
      else node.setAttribute(k, v);
    }
    for (const c of children || []) node.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    return node;
  }

  // (a count that is not 0 never reads "0.0 MB": 40 kB is "0.04 MB"; tenths of a MB rounded as
  // loadedText rounds the whole, in integers: toFixed on the binary 23.95 read "23.9" where the
  // progress line's whole read "24.0", pass forty-two)
  const megabytes = (n) => `${n > 0 && n < 5e4 ? Number((n / 1e6).toPrecision(1)) : (Math.round(n / 1e5) / 10).toFixed(1)} MB`;
  // "23.904 MB of 23.924 MB": what has arrived, rounded down, beside the whole, rounded to nearest,
  // both to the decimals that keep the part below the whole until it is the whole (the texts were
  // compared as text, "23.90" against "23.9", and rounded to nearest: "23.92 MB of 23.9 MB" before
  // the end, pass thirty-six). Integer arithmetic: n and size are byte counts.
  function loadedText(n, size) {
    if (n >= size) return `${megabytes(size)} of ${megabytes(size)}`;
    for (let d = 1; ; d++) {
      const unit = 10 ** (6 - d), part = Math.floor(n / unit), whole = Math.round(size / unit);
      // (and more decimals while what has arrived would read 0: "0.0 MB of 23.9 MB" for 65,536 bytes)
      if ((part < whole && (part > 0 || n === 0)) || d >= 6) return `${(part / 10 ** d).toFixed(d)} MB of ${(whole / 10 ** d).toFixed(d)} MB`;
    }
  }
  // a time the page's clock measured: a coarse clock (privacy settings) can read 0 for a short run
  const msText = (ms) => (ms > 0 ? `${Number(ms.toFixed(0)) === 0 ? ms.toPrecision(1) : ms.toFixed(0)} ms`
    : "less than the clock's step");
  const quoted = (words) => words.map((w) => `“${w}”`).join(", ");
  // A yield to the browser, so that what the page just wrote is painted before a long computation.
  const paint = () => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));

  // The model's bytes with the share received so far (onProgress(received)), as an ArrayBuffer.
  async function fetchModel(url, onProgress) {
    // the URL names the payload's version (?v=its hash): a copy the browser keeps is never stale
    const res = await fetch(url, { cache: "force-cache" });
    if (!res.ok) throw new Error(`${url.split("?")[0]}: HTTP ${res.status}`);
    if (!res.body || !res.body.getReader) return res.arrayBuffer();
    const reader = res.body.getReader(), chunks = [];
    let received = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      received += value.length;
      onProgress(received);
    }
    const out = new Uint8Array(received);
    let at = 0;
    for (const c of chunks) { out.set(c, at); at += c.length; }
    return out.buffer;
  }

  // What the reader is told about a run: the cut, the unknown words, the time (null: nothing to say).
  function notes(m, r) {
    const out = [];
    if (r.cut)
      out.push(`Your text makes ${r.total} tokens; the model runs here on at most ${m.c.max_tokens}, [CLS] and [SEP] ` +
        `included, so it reads the first ${r.cut.kept} and stops before “${r.cut.first}” (token ${r.cut.kept + 2} ` +
        `of ${r.total}, counting [CLS]): the last ${r.cut.dropped} ${r.cut.dropped === 1 ? "token is" : "tokens are"} left out.`);
    if (r.unknown.length) {
      const words = [...new Set(r.unknown)];
      out.push(`${quoted(words)} ${words.length === 1 ? "is" : "are"} not in the model's vocabulary of ` +
        `${m.vocab.length.toLocaleString("en")} tokens, nor made of its pieces: ` +
        `${words.length === 1 ? "it becomes" : "each becomes"} [UNK] (unknown), shown as such.`);
    }
    if (r.longWords.length)
      out.push(`A word of ${Array.from(r.longWords[0]).length} characters is longer than the ${m.c.max_chars_per_word} ` +
        "the tokenizer splits into pieces: it becomes [UNK].");
    return out;
  }

  function init(box, ui) {
    const holder = box.querySelector(".mha-explorer-data");
    const size = Number(holder.dataset.bytes) || 0;
    const id = `bl-${Math.random().toString(36).slice(2, 8)}`;
    const input = el("input", { id: `${id}-text`, type: "text", class: "bl-text", autocomplete: "off", spellcheck: "false",
      value: box.dataset.sentence || "The bank by the river closed before the storm, so we waited at the station." });
    const go = el("button", { type: "button", class: "mha-button bl-go", text: `Load the model (${megabytes(size)}) and run` });
    const progress = el("progress", { class: "bl-progress", max: String(size || 1), value: "0", "aria-label": "Loading the model" });
    const status = el("p", { class: "bl-status", role: "status" });
    const error = el("p", { class: "bl-error", role: "alert" });
    const note = el("div", { class: "bl-note" });
    ui.classList.add("bl");
    ui.append(
      el("p", { class: "bl-intro", text: "Type a sentence: all-MiniLM-L6-v2 runs on it in your browser, and the viewer " +
        "below shows every head on it. The model's weights are fetched once, when you first ask; your browser keeps them." }),
      el("div", { class: "bl-row" }, [el("label", { for: input.id, text: "Your sentence" }), input, go]),
      el("div", { class: "bl-loading" }, [progress, status]), error, note);
    progress.hidden = true;
    error.hidden = true;

    let model = null, loading = null, running = false;

    function say(msg) { error.textContent = msg || ""; error.hidden = !msg; }

    function load() {
      if (!loading) {
        progress.hidden = false;
        status.textContent = `Loading the model: 0.0 of ${megabytes(size)}…`;
        const t0 = performance.now();
        loading = fetchModel(holder.dataset.src, (n) => {
          progress.value = n;
          status.textContent = `Loading the model: ${loadedText(n, size)}…`;
        })
          .then((buffer) => {
            status.textContent = "Unpacking the weights…";
            return paint().then(() => loadModel(buffer));
          })
          .then((m) => {
            model = m;
            ui.dataset.model = "loaded";
            ui.dataset.loadMs = String(Math.round(performance.now() - t0));
            progress.hidden = true;
            go.textContent = "Run";
            return m;
          })
          .catch((err) => {
            loading = null;
            progress.hidden = true;
            status.textContent = "";
            throw err;
          });
      }
      return loading;
    }

    function viewer() {
      const v = document.querySelector('.mha-explorer[data-explorer="bert"] .mha-explorer-ui');
      return v && v.mhaShowSentence ? v : null;
    }

    async function runIt() {
      if (running) return;
      const text = input.value;
      note.replaceChildren();
      if (!text.trim()) {
        say("The box is empty: type a sentence (a word is enough) for the model to read.");
        return;
      }
      say("");
      running = true;
      go.disabled = true;
      try {
        if (!model) {
          try {
            await load();
          } catch (err) {
            say(`The model could not be loaded (${err.message}). The built-in sentences below still work; ` +
              "try again later.");
            return;
          }
        }
        const tk = tokenize(model.tokenizer, text);
        if (tk.tokens.length < 3) {
          say("Nothing of this text is left for the model: the tokenizer drops control and formatting characters, " +
            "and no word remains. Type a word.");
          return;
        }
        const v = viewer();
        if (!v) {
          say("The viewer below did not start, so there is nowhere to show the weights. Reload the page to try again.");
          return;
        }
        status.textContent = `Running the model on ${tk.tokens.length} tokens…`;
        await paint();
        const r = run(model, text);
        v.mhaShowSentence(r);
        ui.dataset.runs = String(Number(ui.dataset.runs || 0) + 1);
        ui.dataset.ms = r.ms.toFixed(1);
        status.textContent = `${r.tokens.length} tokens, every head of all ${model.c.layers} layers computed in ` +
          `${msText(r.ms)} in your browser. The viewer below shows them.`;
        note.replaceChildren(...notes(model, r).map((t) => el("p", { text: t })));
      } finally {
        running = false;
        go.disabled = false;
      }
    }

    const start = () => { runIt().catch((err) => { say(`The model failed: ${err.message}`); setTimeout(() => { throw err; }); }); };
    go.addEventListener("click", start);
    input.addEventListener("keydown", (e) => {
      if (e.key === "Enter") { e.preventDefault(); start(); }
    });
    ui.loadModel = load; // for the tests and the bench
  }

  function initAll() {
    document.querySelectorAll('.mha-explorer[data-explorer="bert_live"]').forEach((box) => {
      const ui = box.querySelector(".mha-explorer-ui");
      if (!ui || ui.dataset.ready) return;
      ui.hidden = false;
      try {
        init(box, ui);
      } catch (err) {
        ui.hidden = true; // the static figure stays
        throw err;
      }
      ui.dataset.ready = "1";
      const fallback = document.querySelector('.mha-explorer-static[data-static-for="bert_live"]');
      if (fallback) fallback.hidden = true;
    });
  }

  // Not registered with explorers.js, which fetches a payload as the page loads: this one is
  // fetched when the reader first asks for a run.
  if (typeof document$ !== "undefined") document$.subscribe(initAll); // Material's instant navigation
  else if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", initAll);
  else initAll();
})(typeof window !== "undefined" ? window : globalThis);
