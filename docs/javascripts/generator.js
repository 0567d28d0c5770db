// The live generator (page: Generating text: the KV cache), widget "generator".
//
// The course's tiny character model runs here, in the reader's browser, in plain JavaScript:
// the same network as mhalib's numpy forward pass (mhalib/models/tiny_numpy.py), in float64
// as numpy computes it, on the weights the build put in the payload
// (figures/generation/lm_generator.py). It writes text one character at a time, either with a
// KV cache (each step projects the new token only and attends over the kept keys and values)
// or by running the full causal pass over the whole text again at every step. The sampler is
// mhalib.sample_next's (temperature, then top-k, then top-p; u from PCG32, mhalib/prng.py),
// so a seed gives the same text here as in Python, unless a draw or the top-p cut falls within
// a rounding error of the line between two characters (this file sums left to right, numpy
// pairwise: the last bit of a probability can differ). Tests hold all of it to mhalib
// (tests/test_generator.py), through window.mhaGenerator.
//
// The payload (about 1.9 MB) is fetched when the reader first asks for text, not with the page.
// Shapes: T tokens, D d_model, H heads, d = D / H, F d_ff, V vocabulary; matrices row-major,
// row-vector convention (y = x W, W of shape (D_in, D_out)), as in mhalib.
(function (root) {
  "use strict";

  // ---- PCG32 (mhalib/prng.py): 64-bit state in a BigInt ---------------------------------
  const MASK64 = (1n << 64n) - 1n;
  const MULT = 6364136223846793005n;

  function u64(value, name) {
    const ok = (typeof value === "bigint") || (typeof value === "number" && Number.isSafeInteger(value));
    if (!ok || BigInt(value) < 0n || BigInt(value) > MASK64)
      throw new RangeError(`${name} must be an integer in [0, 2**64), got ${String(value)}`);
    return BigInt(value);
  }

  class Pcg32 {
    constructor(seed, stream = 54) {
      const s = u64(seed, "seed"), inc = ((u64(stream, "stream") << 1n) | 1n) & MASK64;
      this.inc = inc;
      this.state = 0n;
      this.nextU32();
      this.state = (this.state + s) & MASK64;
      this.nextU32();
    }

    nextU32() {
      const old = this.state;
      this.state = (old * MULT + this.inc) & MASK64;
      const x = Number((((old >> 18n) ^ old) >> 27n) & 0xffffffffn);
      const r = Number(old >> 59n);
      return ((x >>> r) | (x << ((32 - r) & 31))) >>> 0;
    }

    random() { // u = out / 2^32 in [0, 1): one draw per token
      return this.nextU32() / 4294967296;
    }
  }

  // ---- the payload: float16 weights, bytes split high/low, deflated, base64 -------------
  function halfToFloat(h) {
    const sign = h & 0x8000 ? -1 : 1, exp = (h >> 10) & 0x1f, frac = h & 0x3ff;
    if (exp === 0) return sign * frac * 2 ** -24; // subnormal (and zero)
    if (exp === 31) return frac ? NaN : sign * Infinity;
    return sign * (1 + frac / 1024) * 2 ** (exp - 15);
  }

  let HALF = null; // all 65536 float16 values as float64, made once
  function halfTable() {
    if (!HALF) {
      HALF = new Float64Array(65536);
      for (let h = 0; h < 65536; h++) HALF[h] = halfToFloat(h);
    }
    return HALF;
  }

  function base64Bytes(text) {
    const bin = atob(text), out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  }

  async function inflate(bytes) { // zlib stream ("deflate" in the Compression Streams API)
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
    return new Uint8Array(await new Response(stream).arrayBuffer());
  }

  // One tensor: n float16 numbers stored as n high bytes, then n low bytes.
  async function decodeTensor(t) {
    const n = t.shape.reduce((a, b) => a * b, 1), bytes = await inflate(base64Bytes(t.data));
    if (bytes.length !== 2 * n) throw new Error(`weight ${t.name}: ${bytes.length} bytes for shape [${t.shape}], expected ${2 * n}`);
    const table = halfTable(), out = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const v = table[(bytes[i] << 8) | bytes[n + i]];
      if (!Number.isFinite(v)) throw new Error(`weight ${t.name}[${i}] is not finite`);
      out[i] = v;
    }
    return out;
  }

  // The model from the payload: config, vocabulary and every weight as a Float64Array.
  async function loadModel(payload) {
    const c = payload.config, w = {};
    for (const t of payload.weights) w[t.name] = await decodeTensor(t);
    const d = c.d_model / c.n_heads, freq = new Float64Array(d / 2);
    for (let i = 0; i < d / 2; i++) freq[i] = c.rope_base ** (-(2 * i) / d); // omega_i = base^(-2i/d)
    const ids = new Map();
    Array.from(payload.vocab).forEach((ch, i) => ids.set(ch, i));
    return { c, w, d, freq, vocab: Array.from(payload.vocab), ids, maxLen: payload.context };
  }

  // ---- the forward pass -------------------------------------------------------------------
  const LN_EPS = 1e-5;

  // out[o..o+D) = g * (x - mean) / sqrt(var + eps) + b, over x[xo..xo+D) (biased variance)
  function layerNorm(x, xo, D, g, b, out, o) {
    let mean = 0;
    for (let i = 0; i < D; i++) mean += x[xo + i];
    mean /= D;
    let v = 0;
    for (let i = 0; i < D; i++) v += (x[xo + i] - mean) ** 2;
    const inv = 1 / Math.sqrt(v / D + LN_EPS);
    for (let i = 0; i < D; i++) out[o + i] = g[i] * ((x[xo + i] - mean) * inv) + b[i];
  }

  // out[o..o+N) = x[xo..xo+K) W (+ bias), W of shape (K, N) row-major
  function matvec(x, xo, W, K, N, out, o, bias) {
    for (let j = 0; j < N; j++) out[o + j] = bias ? bias[j] : 0;
    for (let i = 0; i < K; i++) {
      const xi = x[xo + i], row = i * N;
      if (xi === 0) continue;
      for (let j = 0; j < N; j++) out[o + j] += xi * W[row + j];
    }
  }

  // RoPE in mhalib's default layout: plane i of each head is dimensions (2i, 2i+1), turned by pos * omega_i.
  function rope(v, o, H, d, pos, freq) {
    for (let h = 0; h < H; h++) {
      for (let i = 0; i < d / 2; i++) {
        const a = pos * freq[i], cos = Math.cos(a), sin = Math.sin(a), k = o + h * d + 2 * i;
        const x0 = v[k], x1 = v[k + 1];
        v[k] = x0 * cos - x1 * sin;
        v[k + 1] = x0 * sin + x1 * cos;
      }
    }
  }

  // One query row against keys 0..S-1 of a (S, D) block, per head: out[o..o+D) = softmax(q k^T / sqrt(d)) v.
  function attendRow(q, qo, K, V, S, H, d, D, out, o, scores) {
    const scale = 1 / Math.sqrt(d);
    for (let h = 0; h < H; h++) {
      let max = -Infinity;
      for (let j = 0; j < S; j++) {
        let s = 0;
        for (let e = 0; e < d; e++) s += q[qo + h * d + e] * K[j * D + h * d + e];
        scores[j] = s * scale;
        if (scores[j] > max) max = scores[j];
      }
      let total = 0;
      for (let j = 0; j < S; j++) total += (scores[j] = Math.exp(scores[j] - max));
      for (let e = 0; e < d; e++) out[o + h * d + e] = 0;
      for (let j = 0; j < S; j++) {
        const p = scores[j] / total;
        for (let e = 0; e < d; e++) out[o + h * d + e] += p * V[j * D + h * d + e];
      }
    }
  }

  // x += relu(LN_2(x) W_1 + b_1) W_2 + b_2 for the row x[o..o+D)
  function feedForward(m, l, x, o, s) {
    const { d_model: D, d_ff: F } = m.c, w = m.w;
    layerNorm(x, o, D, w[`${l}.ln2.g`], w[`${l}.ln2.b`], s.h, 0);
    matvec(s.h, 0, w[`${l}.w_1`], D, F, s.hidden, 0, w[`${l}.b_1`]);
    for (let j = 0; j < F; j++) if (s.hidden[j] < 0) s.hidden[j] = 0;
    matvec(s.hidden, 0, w[`${l}.w_2`], F, D, s.y, 0, w[`${l}.b_2`]);
    for (let i = 0; i < D; i++) x[o + i] += s.y[i];
  }

  function scratch(m) {
    const { d_model: D, d_ff: F } = m.c;
    return { h: new Float64Array(D), q: new Float64Array(D), att: new Float64Array(D), y: new Float64Array(D),
      hidden: new Float64Array(F), scores: new Float64Array(m.maxLen) };
  }

  // logits (V,) = LN_f(x[o..o+D)) W_U + b_U
  function unembed(m, x, o, s) {
    const { d_model: D, vocab: Vn } = m.c, out = new Float64Array(Vn);
    layerNorm(x, o, D, m.w["ln_f.g"], m.w["ln_f.b"], s.h, 0);
    matvec(s.h, 0, m.w.w_u, D, Vn, out, 0, m.w.b_u);
    return out;
  }

  function checkToken(m, token, pos) {
    if (!Number.isInteger(token) || token < 0 || token >= m.c.vocab)
      throw new RangeError(`token must be an integer in [0, ${m.c.vocab}), got ${token}`);
    if (pos >= m.maxLen) throw new RangeError(`position ${pos} is past the model's context of ${m.maxLen} tokens`);
  }

  // A KV cache: per layer the keys (RoPE applied) and values of the tokens so far, (maxLen, D) each.
  function newCache(m) {
    const { n_layers: L, d_model: D } = m.c, size = m.maxLen * D;
    return { length: 0, k: Array.from({ length: L }, () => new Float64Array(size)),
      v: Array.from({ length: L }, () => new Float64Array(size)), s: scratch(m) };
  }

  // One step with the cache: the new token's k and v are appended in every layer, its query
  // attends over the cache; returns the next token's logits (V,).
  function step(m, cache, token) {
    const { n_layers: L, n_heads: H, d_model: D } = m.c, d = m.d, w = m.w, t = cache.length, s = cache.s;
    checkToken(m, token, t);
    const x = w.tok_emb.slice(token * D, (token + 1) * D); // (D,)
    for (let l = 0; l < L; l++) {
      layerNorm(x, 0, D, w[`${l}.ln1.g`], w[`${l}.ln1.b`], s.h, 0);
      matvec(s.h, 0, w[`${l}.w_q`], D, D, s.q, 0);
      matvec(s.h, 0, w[`${l}.w_k`], D, D, cache.k[l], t * D); // row t of the cache
      matvec(s.h, 0, w[`${l}.w_v`], D, D, cache.v[l], t * D);
      rope(s.q, 0, H, d, t, m.freq);
      rope(cache.k[l], t * D, H, d, t, m.freq);
      attendRow(s.q, 0, cache.k[l], cache.v[l], t + 1, H, d, D, s.att, 0, s.scores);
      matvec(s.att, 0, w[`${l}.w_o`], D, D, s.y, 0);
      for (let i = 0; i < D; i++) x[i] += s.y[i];
      if (m.c.d_ff) feedForward(m, l, x, 0, s);
    }
    cache.length = t + 1;
    return unembed(m, x, 0, s);
  }

  // The full causal pass over tokens (T,), no cache: every layer projects all T rows and each
  // query i attends to keys 0..i. Returns the logits of the last position (V,), or with
  // all = true of every position, (T, V) row-major.
  function forward(m, tokens, all = false) {
    const { n_layers: L, n_heads: H, d_model: D, vocab: Vn } = m.c, d = m.d, w = m.w, T = tokens.length;
    if (T < 1) throw new RangeError("tokens must hold at least one token");
    tokens.forEach((tok, i) => checkToken(m, tok, i));
    const s = scratch(m), X = new Float64Array(T * D), Hn = new Float64Array(T * D);
    const Q = new Float64Array(T * D), K = new Float64Array(T * D), Vv = new Float64Array(T * D), A = new Float64Array(T * D);
    tokens.forEach((tok, i) => X.set(w.tok_emb.subarray(tok * D, (tok + 1) * D), i * D)); // (T,) -> (T, D)
    for (let l = 0; l < L; l++) {
      for (let i = 0; i < T; i++) {
        layerNorm(X, i * D, D, w[`${l}.ln1.g`], w[`${l}.ln1.b`], Hn, i * D);
        matvec(Hn, i * D, w[`${l}.w_q`], D, D, Q, i * D);
        matvec(Hn, i * D, w[`${l}.w_k`], D, D, K, i * D);
        matvec(Hn, i * D, w[`${l}.w_v`], D, D, Vv, i * D);
        rope(Q, i * D, H, d, i, m.freq);
        rope(K, i * D, H, d, i, m.freq);
      }
      for (let i = 0; i < T; i++) attendRow(Q, i * D, K, Vv, i + 1, H, d, D, A, i * D, s.scores); // causal
      for (let i = 0; i < T; i++) {
        matvec(A, i * D, w[`${l}.w_o`], D, D, s.y, 0);
        for (let e = 0; e < D; e++) X[i * D + e] += s.y[e];
        if (m.c.d_ff) feedForward(m, l, X, i * D, s);
      }
    }
    if (!all) return unembed(m, X, (T - 1) * D, s);
    const out = new Float64Array(T * Vn);
    for (let i = 0; i < T; i++) out.set(unembed(m, X, i * D, s), i * Vn);
    return out;
  }

  // ---- sampling (mhalib/sampling.py) -------------------------------------------------------
  // a measured ratio to one decimal, or the decimals that tell a ratio that is not 1 from 1.0 and
  // one that is not 0 from 0.0 (0.96 and 1.04 times as fast are not "1.0 times")
  function ratioText(r) {
    let digits = 1, text = r.toFixed(digits);
    while (((r !== 1 && Number(text) === 1) || (r !== 0 && Number(text) === 0)) && digits < 17) text = r.toFixed(++digits);
    return text;
  }

  // A time the page's clock measured, to 0.1 ms (more where that reads 0). A browser may coarsen
  // its clock (privacy settings: steps of 16.7 ms), so a short run can measure 0: it says so,
  // and no rate is divided by it ("Infinity characters/s", "NaN times as fast").
  function msText(ms) {
    if (!(ms > 0)) return "under the clock's step";
    const text = ms.toFixed(1);
    return `${Number(text) === 0 ? ms.toPrecision(1) : text} ms`;
  }
  function rateText(n, ms) {
    if (!(ms > 0)) return "–";
    const rate = n / (ms / 1000), text = rate.toFixed(0);
    return rate > 0 && Number(text) === 0 ? rate.toPrecision(1) : text;
  }

  function softmax(z) { // exp(z - max) / sum; -inf entries get exactly 0
    let max = -Infinity;
    for (const v of z) if (v > max) max = v;
    const e = z.map((v) => Math.exp(v - max));
    let total = 0;
    for (const v of e) total += v;
    return e.map((v) => v / total);
  }

  function checkFilters(o) {
    const { temperature = 1, topK = null, topP = null, minKeep = 1 } = o || {};
    if (typeof temperature !== "number" || !Number.isFinite(temperature) || temperature <= 0)
      throw new RangeError(`temperature must be a finite number > 0, got ${temperature}`);
    if (topK !== null && !(Number.isInteger(topK) && topK >= 1))
      throw new RangeError(`top-k must be a whole number >= 1 (or off), got ${topK}`);
    if (topP !== null && !(typeof topP === "number" && topP > 0 && topP <= 1))
      throw new RangeError(`top-p must be a number in (0, 1] (or off), got ${topP}`);
    if (!(Number.isInteger(minKeep) && minKeep >= 1)) throw new RangeError(`minKeep must be an integer >= 1, got ${minKeep}`);
    return { temperature, topK, topP, minKeep };
  }

  // Temperature, then top-k, then top-p, as mhalib.filter_logits: removed entries become -inf.
  function filterLogits(logits, options) {
    const { temperature, topK, topP, minKeep } = checkFilters(options);
    const V = logits.length;
    let z = Array.from(logits, (v) => v / temperature);
    const over = z.filter((v, j) => Number.isFinite(logits[j]) && !Number.isFinite(v)).length;
    if (over) // Infinity - Infinity in the softmax would be NaN, and every draw token 0: refused, as in mhalib
      throw new RangeError(`overflow: logits / temperature (temperature=${temperature}) exceeds the largest ` +
        `finite number (${Number.MAX_VALUE.toPrecision(6)}) in ${over} entries; raise temperature`);
    if (topK !== null) { // keep z_j >= the k-th largest (ties with it stay)
      const k = Math.min(Math.max(topK, minKeep), V);
      const kth = [...z].sort((a, b) => a - b)[V - k];
      z = z.map((v) => (v < kth ? -Infinity : v));
    }
    if (topP !== null) { // ascending, ties by index (a stable sort); drop while cumsum <= 1 - top_p
      const order = z.map((_, j) => j).sort((a, b) => z[a] - z[b] || a - b);
      const p = softmax(order.map((j) => z[j]));
      let c = 0;
      const limit = 1 - topP, out = [...z];
      for (let r = 0; r < V - minKeep; r++) {
        c += p[r];
        if (c <= limit) out[order[r]] = -Infinity;
      }
      z = out;
    }
    return z;
  }

  // y = the number of j with C_j <= u, C the cumulative softmax normalised to end at 1 (mhalib.sample_next).
  function sampleNext(logits, rng, options) {
    const p = softmax(filterLogits(logits, options));
    const cdf = new Float64Array(p.length);
    let c = 0;
    p.forEach((v, j) => { cdf[j] = c += v; });
    const last = cdf[cdf.length - 1], u = rng.random();
    let y = 0;
    for (let j = 0; j < cdf.length; j++) if (cdf[j] / last <= u) y++;
    return y;
  }

  function greedy(logits) { // argmax, ties to the lowest id
    let best = 0;
    for (let j = 1; j < logits.length; j++) if (logits[j] > logits[best]) best = j;
    return best;
  }

  // ---- generation -------------------------------------------------------------------------
  // A count and its noun, singular for one, as style.counted writes them in Python ("1 character",
  // "2 characters"; the stats read "1 characters").
  function counted(n, noun) { return `${n.toLocaleString("en-US")} ${n === 1 ? noun : noun + "s"}`; }

  // The reader's settings checked, with the message the page shows for each fault (null: fine).
  function checkRequest(m, prompt, nNew) {
    if (!prompt.length) return "The prompt is empty: type at least one character for the model to continue.";
    const missing = [...new Set(Array.from(prompt).filter((ch) => !m.ids.has(ch)))];
    if (missing.length) {
      const shown = missing.map((ch) => (ch === "\n" ? "a line break" : ch === " " ? "a space" : `“${ch}”`));
      return `The model does not know ${missing.length === 1 ? "the character" : "the characters"} ${shown.join(", ")}: ` +
        `it was trained on this course's text and has no token for ${missing.length === 1 ? "it" : "them"}. ` +
        `Remove or replace ${missing.length === 1 ? "it" : "them"}.`;
    }
    if (!Number.isInteger(nNew) || nNew < 1) return `New characters must be a whole number of at least 1, got ${nNew}.`;
    const n = Array.from(prompt).length, room = m.maxLen - n;
    if (n + nNew > m.maxLen)
      return `The prompt (${counted(n, "character")}) plus ${counted(nNew, "new one")} makes ${n + nNew}, past the ` +
        `model's context of ${counted(m.maxLen, "character")}: ` + (room >= 1
        ? `ask for at most ${counted(room, "new character")}, or shorten the prompt.`
        : `shorten the prompt to at most ${counted(m.maxLen - 1, "character")}, to leave room for one new one.`);
    return null;
  }

  function encode(m, text) { return Array.from(text, (ch) => m.ids.get(ch)); }
  function decode(m, ids) { return ids.map((i) => m.vocab[i]).join(""); }

  const now = () => (typeof performance !== "undefined" ? performance.now() : Date.now());

  // Generate nNew tokens after prompt (ids). options: seed (null: greedy), filters, cache (bool),
  // onToken(id, stats) and pause() (awaited between tokens when given: the page yields there).
  // The times count the computation only, not the pauses: firstMs to the first new token (the
  // prompt's pass included), ms in all.
  async function generate(m, prompt, nNew, options = {}) {
    const { seed = null, cache = true, onToken = null, pause = null, shouldStop = null } = options;
    const filters = checkFilters(options), rng = seed === null ? null : new Pcg32(seed);
    const ids = [...prompt];
    let ms = 0, firstMs = null, kv = null, logits = null, t0 = now();
    if (cache) { // the prompt's pass fills the cache
      kv = newCache(m);
      for (const tok of prompt) logits = step(m, kv, tok);
    }
    for (let n = 0; n < nNew; n++) {
      if (!cache) logits = forward(m, ids);
      const next = rng ? sampleNext(logits, rng, filters) : greedy(logits);
      ids.push(next);
      if (cache && n < nNew - 1) logits = step(m, kv, next);
      const t1 = now();
      ms += t1 - t0;
      if (firstMs === null) firstMs = ms;
      if (onToken) onToken(next, { n: n + 1, ms, firstMs });
      if (shouldStop && shouldStop()) break;
      if (pause) await pause();
      t0 = now();
    }
    return { ids, firstMs, ms, generated: ids.length - prompt.length };
  }

  // The same, without pauses and synchronously (tests and the bench).
  function generateSync(m, prompt, nNew, options = {}) {
    const { seed = null, cache = true } = options;
    const filters = checkFilters(options), rng = seed === null ? null : new Pcg32(seed);
    const ids = [...prompt];
    const t0 = now();
    let firstMs = null, kv = null, logits = null;
    if (cache) { kv = newCache(m); for (const tok of prompt) logits = step(m, kv, tok); }
    for (let n = 0; n < nNew; n++) {
      if (!cache) logits = forward(m, ids);
      ids.push(rng ? sampleNext(logits, rng, filters) : greedy(logits));
      if (cache && n < nNew - 1) logits = step(m, kv, ids[ids.length - 1]);
      if (firstMs === null) firstMs = now() - t0;
    }
    return { ids, firstMs, ms: now() - t0 };
  }

  const api = { Pcg32, halfToFloat, decodeTensor, loadModel, newCache, step, forward, softmax, filterLogits,
    sampleNext, greedy, checkRequest, counted, encode, decode, generate, generateSync };
  root.mhaGenerator = api;
  if (typeof document === "undefined") return; // node (tests): the numerics only

  root.mhaGenerator.ui = initAll; // the widget (generator_ui below)

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

  let uid = 0;
  function field(label, attrs, hint) {
    const { tag = "input", ...rest } = attrs;
    const id = `mha-gen-${++uid}`, input = el(tag, { id, ...rest });
    const kids = [el("label", { for: id, text: label }), input];
    if (hint) {
      const hid = `${id}-hint`;
      input.setAttribute("aria-describedby", hid);
      kids.push(el("span", { class: "mha-gen-hint", id: hid, text: hint }));
    }
    return { input, wrap: el("div", { class: "mha-gen-field" }, kids) };
  }

  // A yield to the event loop that is not clamped as nested timers are (a message, not setTimeout).
  function yielder() {
    const channel = new MessageChannel(), waiting = [];
    channel.port1.onmessage = () => waiting.shift()();
    return () => new Promise((resolve) => { waiting.push(resolve); channel.port2.postMessage(0); });
  }

  function readNumber(input, name, { integer = false, optional = false } = {}) {
    const raw = input.value.trim();
    if (raw === "" && optional) return { value: null };
    const v = Number(raw);
    if (raw === "" || !Number.isFinite(v) || (integer && !Number.isInteger(v)))
      return { error: `${name} must be ${integer ? "a whole number" : "a number"}${optional ? " (or empty for off)" : ""}, got “${raw}”.` };
    return { value: v };
  }

  function init(box, ui) {
    const holder = box.querySelector(".mha-explorer-data");
    const prompt = field("Prompt", { tag: "textarea", rows: "2", spellcheck: "false", autocomplete: "off" });
    prompt.input.value = box.dataset.prompt || "Attention is ";
    const n = field("New characters", { type: "number", min: "1", max: "127", step: "1", value: "100", inputmode: "numeric" });
    const temp = field("Temperature", { type: "number", min: "0.05", step: "0.05", value: "0.8", inputmode: "decimal" });
    const topK = field("Top-k", { type: "number", min: "1", step: "1", value: "20", inputmode: "numeric" }, "empty: off");
    const topP = field("Top-p", { type: "number", min: "0.01", max: "1", step: "0.01", value: "0.95", inputmode: "decimal" }, "empty: off");
    const seed = field("Seed", { type: "number", min: "0", max: "4294967295", step: "1", value: "1", inputmode: "numeric" });
    const noCacheId = `mha-gen-${++uid}`;
    const noCache = el("input", { type: "checkbox", id: noCacheId });
    const switchRow = el("div", { class: "mha-gen-switch" }, [noCache,
      el("label", { for: noCacheId, text: "Recompute the full pass every step (no cache)" })]);
    const go = el("button", { type: "button", class: "mha-button mha-gen-go", text: "Generate" });
    const stop = el("button", { type: "button", class: "mha-button", text: "Stop", disabled: "" });
    const error = el("p", { class: "mha-gen-error", role: "alert" });
    const output = el("output", { class: "mha-gen-text", "aria-label": "The text so far" });
    const promptPart = el("span", { class: "mha-gen-prompt" }), newPart = el("span", { class: "mha-gen-new" });
    output.append(promptPart, newPart);
    output.hidden = true; // until the first run
    const stats = el("p", { class: "mha-gen-stats" });
    const table = el("table", { class: "mha-gen-runs" });
    const verdict = el("p", { class: "mha-gen-verdict" });
    const live = el("p", { class: "mha-sr-only mha-gen-live", "aria-live": "polite" });
    ui.append(
      el("div", { class: "mha-gen-controls" }, [prompt.wrap, n.wrap, temp.wrap, topK.wrap, topP.wrap, seed.wrap]),
      switchRow, el("div", { class: "mha-gen-buttons" }, [go, stop]), error, output, stats, table, verdict, live);

    let model = null, loading = null, running = false, stopAsked = false;
    const last = { true: null, false: null }; // the last run with the cache and without, by settings
    const pause = yielder();

    function load() {
      if (!loading) {
        loading = fetch(holder.dataset.src)
          .then((res) => { if (!res.ok) throw new Error(`${holder.dataset.src}: HTTP ${res.status}`); return res.json(); })
          .then(loadModel)
          .then((m) => {
            // a few throwaway steps both ways while "Loading" shows: the engine compiles the
            // forward pass now, so the reader's first run is timed at its usual speed
            generateSync(m, [0, 1, 2], 3, { cache: true });
            generateSync(m, [0, 1, 2], 2, { cache: false });
            model = m;
            ui.dataset.model = "loaded";
            return m;
          })
          .catch((err) => { loading = null; throw err; });
      }
      return loading;
    }

    function settings() { // the numbers, or {error}
      const out = {};
      for (const [key, input, name, opts] of [["nNew", n.input, "New characters", { integer: true }],
        ["temperature", temp.input, "Temperature", {}], ["topK", topK.input, "Top-k", { integer: true, optional: true }],
        ["topP", topP.input, "Top-p", { optional: true }], ["seed", seed.input, "Seed", { integer: true }]]) {
        const r = readNumber(input, name, opts);
        if (r.error) return { error: r.error };
        out[key] = r.value;
      }
      if (!(out.temperature > 0)) return { error: `Temperature must be greater than 0, got ${out.temperature}.` };
      if (out.topK !== null && out.topK < 1) return { error: `Top-k must be at least 1 (or empty for off), got ${out.topK}.` };
      if (out.topP !== null && !(out.topP > 0 && out.topP <= 1))
        return { error: `Top-p must be greater than 0 and at most 1 (or empty for off), got ${out.topP}.` };
      if (out.seed < 0 || out.seed > 4294967295) return { error: `Seed must be a whole number from 0 to 4294967295, got ${out.seed}.` };
      return out;
    }

    function say(msg) { error.textContent = msg || ""; error.hidden = !msg; }

    function showRuns() {
      table.replaceChildren(el("caption", { text: "Your last run each way, measured in this browser" }),
        el("tr", {}, ["Decoding", "Characters", "First character", "Per second"].map((h) => el("th", { scope: "col", text: h }))));
      for (const key of ["true", "false"]) {
        const r = last[key];
        if (!r) continue;
        table.append(el("tr", {}, [el("th", { scope: "row", text: key === "true" ? "KV cache" : "full pass" }),
          el("td", { text: String(r.generated) }), el("td", { text: msText(r.firstMs) }),
          el("td", { text: rateText(r.generated, r.ms) })]));
      }
      table.hidden = !last.true && !last.false;
      const a = last.true, b = last.false;
      if (a && b && a.key === b.key) {
        const same = a.text === b.text;
        verdict.textContent = same
          ? `Same settings and seed both ways: the two texts are identical (${counted(a.generated, "character")}). ` +
            (a.ms > 0 && b.ms > 0 ? `The cache was ${ratioText((a.generated / a.ms) / (b.generated / b.ms))} times as fast.`
              : "This browser's clock is too coarse to tell their speeds apart.")
          : `Same settings and seed both ways, but the texts differ from character ${[...a.text].findIndex((c, i) => c !== b.text[i]) + 1}.`;
        verdict.dataset.identical = String(same);
      } else {
        verdict.textContent = a || b ? "Run again with the switch flipped and the same settings to compare the two ways." : "";
        delete verdict.dataset.identical;
      }
    }

    async function run() {
      if (running) return;
      const text = prompt.input.value;
      if (!text.length) { say("The prompt is empty: type at least one character for the model to continue."); return; }
      const s = settings();
      if (s.error) { say(s.error); return; }
      say("");
      running = true; stopAsked = false;
      go.disabled = true;
      try {
        if (!model) { live.textContent = stats.textContent = "Loading the model…"; await load(); }
        const problem = checkRequest(model, text, s.nNew);
        if (problem) { say(problem); stats.textContent = ""; return; }
        const useCache = !noCache.checked, promptIds = encode(model, text);
        stop.disabled = false;
        promptPart.textContent = text;
        newPart.textContent = "";
        output.hidden = false;
        live.textContent = `Generating ${counted(s.nNew, "character")} ${useCache ? "with the KV cache" : "with the full pass every step"}.`;
        let pending = "";
        const r = await generate(model, promptIds, s.nNew, {
          seed: s.seed, temperature: s.temperature, topK: s.topK, topP: s.topP, cache: useCache,
          onToken: (id, st) => {
            pending += model.vocab[id];
            stats.textContent = `${st.n} of ${counted(s.nNew, "character")} · first after ${msText(st.firstMs)} · ` +
              `${rateText(st.n, st.ms)} characters/s`;
          },
          pause: async () => { newPart.textContent += pending; pending = ""; await pause(); },
          shouldStop: () => stopAsked,
        });
        newPart.textContent += pending;
        const gen = decode(model, r.ids.slice(promptIds.length)), rate = rateText(r.generated, r.ms);
        ui.dataset.text = gen;
        if (r.generated === s.nNew) {
          last[String(useCache)] = { key: JSON.stringify([text, s]), text: gen, generated: r.generated, firstMs: r.firstMs, ms: r.ms };
        }
        stats.textContent = `${counted(r.generated, "character")} · first after ${msText(r.firstMs)} · ${rate} characters/s ` +
          `(${useCache ? "with the KV cache" : "full pass every step"}; computing time only)` + (r.generated < s.nNew ? " · stopped" : "");
        live.textContent = `Done: ${counted(r.generated, "character")}` + (r.ms > 0 ? `, ${rate} per second.` : ".");
        showRuns();
      } catch (err) {
        say(`The generator failed: ${err.message}`);
        if (!(err instanceof RangeError)) throw err; // a refused setting is the reader's to fix, said above
      } finally {
        running = false;
        go.disabled = false;
        stop.disabled = true;
        ui.dataset.runs = String(Number(ui.dataset.runs || 0) + 1);
      }
    }

    go.addEventListener("click", () => { run().catch((err) => setTimeout(() => { throw err; })); });
    stop.addEventListener("click", () => { stopAsked = true; });
    prompt.input.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); go.click(); }
    });
    say("");
    table.hidden = true;
    ui.loadModel = load; // for the tests and the bench
  }

  function initAll() {
    document.querySelectorAll('.mha-explorer[data-explorer="generator"]').forEach((box) => {
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
      const fallback = document.querySelector('.mha-explorer-static[data-static-for="generator"]');
      if (fallback) fallback.hidden = true;
    });
  }

  // Not registered with explorers.js, which fetches a payload as the page loads: this one is
  // fetched when the reader first presses Generate.
  if (typeof document$ !== "undefined") document$.subscribe(initAll); // Material's instant navigation
  else if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", initAll);
  else initAll();
})(typeof window !== "undefined" ? window : globalThis);
