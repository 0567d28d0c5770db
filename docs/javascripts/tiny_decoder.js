// The tiny kback decoders, run in the reader's browser (page: Does it extrapolate?; widget "extrapolation").
//
// A second implementation of mhalib.models.tiny_numpy.forward, in float64 (Float64Array):
//     x_0    = E[tokens]  (+ PE[0..T-1] for "sinusoidal", + P[0..T-1] for "learned")
//     layer: x = x + MHA(LN_1(x))                 causal; RoPE rotates q and k, ALiBi adds -m_h (i - j)
//            x = x + relu(LN_2(x) W_1 + b_1) W_2 + b_2
//     logits = LN_f(x) W_U + b_U
// LayerNorm: biased variance, eps 1e-5. Heads: head h reads columns h*d .. h*d+d-1 of q, k, v.
// RoPE pairs dimensions (2i, 2i+1), omega_i = base^(-2i/d); "interpolation" reads position p as
// p / s, "ntk" uses base * s^(d/(d-2)) (mhalib.rope_frequencies). ALiBi slopes as mhalib.alibi_slopes.
// tests/test_extrapolation_live.py holds the logits equal to numpy's within 1e-5.
//
// The payload (figures/experiments/extrapolation_live.py) holds each model's config and its
// weights as float16, and fixed evaluation sequences: the widget scores their prefixes.
// Numerics are exposed as window.mhaTinyDecoder for the tests. The widget registers with
// explorers.js (window.mhaExplorers.register), which widgets.js loads first.
(function () {
  "use strict";

  const LN_EPS = 1e-5; // mhalib.models.tiny_numpy.LN_EPS (torch's default)
  const SINUSOIDAL_BASE = 10000; // mhalib.sinusoidal.DEFAULT_BASE, what tiny_numpy.forward uses

  // ---- weights ------------------------------------------------------------------------
  // One IEEE half-precision number (its 16 bits) as a float64.
  function halfToFloat(bits) {
    const sign = bits & 0x8000 ? -1 : 1;
    const exponent = (bits >> 10) & 0x1f;
    const fraction = bits & 0x3ff;
    if (exponent === 0) return sign * fraction * Math.pow(2, -24); // subnormal (or zero)
    if (exponent === 31) return fraction ? NaN : sign * Infinity;
    return sign * (1 + fraction / 1024) * Math.pow(2, exponent - 15);
  }

  // {shape, f16: base64 of little-endian float16} -> Float64Array, refusing a value that is not finite.
  function decodeTensor(tensor, name) {
    const bytes = atob(tensor.f16);
    const n = tensor.shape.reduce((a, b) => a * b, 1);
    if (bytes.length !== 2 * n) throw new Error(`weights[${name}]: ${bytes.length} bytes, shape ${tensor.shape} needs ${2 * n}`);
    const out = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      out[i] = halfToFloat(bytes.charCodeAt(2 * i) | (bytes.charCodeAt(2 * i + 1) << 8));
      if (!Number.isFinite(out[i])) throw new Error(`weights[${name}] holds ${out[i]} at index ${i}: weights must be finite`);
    }
    return out;
  }

  function loadModel(stored) {
    const c = stored.config;
    const w = {};
    for (const [name, tensor] of Object.entries(stored.weights)) w[name] = decodeTensor(tensor, name);
    return { config: c, w, dHead: c.d_model / c.n_heads };
  }

  // ---- positions ----------------------------------------------------------------------
  // mhalib.alibi_slopes: 2^(-8h/n), h = 1..n, for a power of two n (as 2^(-r/n) 2^-q with
  // 8h = qn + r, so whole powers of two are exact); otherwise those of the largest power of two
  // below H, then every other slope of twice that, as many as are missing.
  function alibiSlopes(H) {
    const powers = (n) => Array.from({ length: n }, (_, i) =>
      Math.pow(2, -((8 * (i + 1)) % n) / n) * Math.pow(2, -Math.floor((8 * (i + 1)) / n)));
    const low = Math.pow(2, Math.floor(Math.log2(H)));
    const slopes = powers(low);
    if (low < H) slopes.push(...powers(2 * low).filter((_, i) => i % 2 === 0).slice(0, H - low));
    return slopes;
  }

  // omega_i = base^(-2i/dim), i = 0 .. dim/2 - 1 (mhalib's sinusoidal and RoPE frequencies).
  function frequencies(dim, base) {
    return Array.from({ length: dim / 2 }, (_, i) => Math.pow(base, (-2 * i) / dim));
  }

  // RoPE's positions and base for a scaling at factor s (mhalib.models.tiny_numpy._rope_arguments).
  function ropeArguments(config, T, scaling, factor) {
    if (scaling !== null && scaling !== "interpolation" && scaling !== "ntk") {
      throw new Error(`scaling must be none, interpolation or ntk; got ${scaling}`);
    }
    if (!(Number.isFinite(factor) && factor >= 1) || (scaling === null && factor !== 1)) {
      throw new Error(`factor must be a number >= 1 (L / L_train), and 1 without a scaling; got ${factor}`);
    }
    const positions = Array.from({ length: T }, (_, t) => (scaling === "interpolation" ? t / factor : t));
    const d = config.d_model / config.n_heads;
    const base = scaling === "ntk" ? config.rope_base * Math.pow(factor, d / (d - 2)) : config.rope_base;
    return { positions, omega: frequencies(d, base) };
  }

  // ---- linear algebra on row-major Float64Arrays ----------------------------------------
  // x (T, K) @ W (K, N) (+ bias (N,)) -> (T, N)
  function matmul(x, T, K, W, N, bias) {
    const out = new Float64Array(T * N);
    for (let t = 0; t < T; t++) {
      const row = t * N;
      if (bias) for (let n = 0; n < N; n++) out[row + n] = bias[n];
      for (let k = 0; k < K; k++) {
        const a = x[t * K + k];
        const wk = k * N;
        for (let n = 0; n < N; n++) out[row + n] += a * W[wk + n];
      }
    }
    return out;
  }

  // g * (x - mean) / sqrt(var + eps) + b over each row of x (T, D)
  function layerNorm(x, T, D, g, b) {
    const out = new Float64Array(T * D);
    for (let t = 0; t < T; t++) {
      let mean = 0;
      for (let i = 0; i < D; i++) mean += x[t * D + i];
      mean /= D;
      let v = 0;
      for (let i = 0; i < D; i++) v += (x[t * D + i] - mean) ** 2;
      const inv = 1 / Math.sqrt(v / D + LN_EPS);
      for (let i = 0; i < D; i++) out[t * D + i] = g[i] * (x[t * D + i] - mean) * inv + b[i];
    }
    return out;
  }

  // Rotate every head's planes (2i, 2i+1) of q or k (T, D) by positions[t] * omega_i, in place.
  function rotate(a, T, H, d, positions, omega) {
    for (let t = 0; t < T; t++) {
      for (let h = 0; h < H; h++) {
        for (let i = 0; i < d / 2; i++) {
          const angle = positions[t] * omega[i];
          const c = Math.cos(angle), s = Math.sin(angle);
          const at = t * H * d + h * d + 2 * i;
          const x0 = a[at], x1 = a[at + 1];
          a[at] = x0 * c - x1 * s;
          a[at + 1] = x0 * s + x1 * c;
        }
      }
    }
  }

  // Causal attention of head h: weights (T, T), 0 above the diagonal; adds the head's output to concat (T, D).
  function attendHead(q, k, v, T, H, d, h, slope, concat) {
    const D = H * d;
    const scale = 1 / Math.sqrt(d);
    const weights = new Float64Array(T * T);
    const scores = new Float64Array(T);
    for (let i = 0; i < T; i++) {
      let max = -Infinity;
      for (let j = 0; j <= i; j++) {
        let s = 0;
        for (let c = 0; c < d; c++) s += q[i * D + h * d + c] * k[j * D + h * d + c];
        s = s * scale - slope * (i - j); // ALiBi: -m_h (i - j); slope 0 otherwise
        scores[j] = s;
        if (s > max) max = s;
      }
      let sum = 0;
      for (let j = 0; j <= i; j++) {
        scores[j] = Math.exp(scores[j] - max); // the row maximum subtracted: never overflows
        sum += scores[j];
      }
      for (let j = 0; j <= i; j++) {
        const p = scores[j] / sum;
        weights[i * T + j] = p;
        for (let c = 0; c < d; c++) concat[i * D + h * d + c] += p * v[j * D + h * d + c];
      }
    }
    return weights;
  }

  function checkTokens(tokens, vocab) {
    if (!tokens || typeof tokens.length !== "number" || tokens.length < 1) {
      throw new Error(`tokens must be a list of at least one token id; got ${tokens}`);
    }
    for (let t = 0; t < tokens.length; t++) {
      const id = tokens[t];
      if (!Number.isInteger(id) || id < 0 || id >= vocab) {
        throw new Error(`tokens must be whole numbers from 0 to ${vocab - 1}; got ${id} at position ${t}`);
      }
    }
  }

  // The message for a learned table asked for a position it has no row for.
  function learnedLimit(config, T) {
    return `no position rows past ${config.max_len}: not defined. The learned table has rows for positions ` +
      `0 to ${config.max_len - 1}; a length of ${T} needs position ${T - 1}.`;
  }

  // The model on one sequence: logits (T, V) and attention[layer][head] (T, T), as Float64Arrays.
  // options: scaling null | "interpolation" | "ntk" and factor (RoPE only). Refused with an Error
  // (its message says why): bad tokens, a learned model past its table, a scaling on another method.
  function forward(model, tokens, options) {
    const c = model.config, w = model.w;
    const scaling = (options && options.scaling) || null;
    const factor = options && options.factor !== undefined ? options.factor : 1;
    checkTokens(tokens, c.vocab);
    const T = tokens.length, D = c.d_model, H = c.n_heads, d = D / H, V = c.vocab, F = c.d_ff;
    if (c.method === "learned" && T > c.max_len) throw new Error(learnedLimit(c, T));
    if ((scaling !== null || factor !== 1) && c.method !== "rope") {
      throw new Error(`a RoPE scaling applies to the RoPE model only; this model's method is ${c.method}`);
    }
    const x = new Float64Array(T * D);
    for (let t = 0; t < T; t++) for (let i = 0; i < D; i++) x[t * D + i] = w.tok_emb[tokens[t] * D + i];
    if (c.method === "sinusoidal") {
      const omega = frequencies(D, SINUSOIDAL_BASE); // PE[t, 2i] = sin(t w_i), PE[t, 2i+1] = cos(t w_i)
      for (let t = 0; t < T; t++) {
        for (let i = 0; i < D / 2; i++) {
          x[t * D + 2 * i] += Math.sin(t * omega[i]);
          x[t * D + 2 * i + 1] += Math.cos(t * omega[i]);
        }
      }
    } else if (c.method === "learned") {
      for (let t = 0; t < T * D; t++) x[t] += w.pos_emb[t];
    }
    const rope = c.method === "rope" ? ropeArguments(c, T, scaling, factor) : null;
    const slopes = c.method === "alibi" ? alibiSlopes(H) : new Array(H).fill(0);
    const attention = [];
    for (let l = 0; l < c.n_layers; l++) {
      const h1 = layerNorm(x, T, D, w[`${l}.ln1.g`], w[`${l}.ln1.b`]);
      const q = matmul(h1, T, D, w[`${l}.w_q`], D), k = matmul(h1, T, D, w[`${l}.w_k`], D);
      const v = matmul(h1, T, D, w[`${l}.w_v`], D);
      if (rope) {
        rotate(q, T, H, d, rope.positions, rope.omega);
        rotate(k, T, H, d, rope.positions, rope.omega);
      }
      const concat = new Float64Array(T * D);
      attention.push(slopes.map((m, h) => attendHead(q, k, v, T, H, d, h, m, concat)));
      const out = matmul(concat, T, D, w[`${l}.w_o`], D);
      for (let i = 0; i < T * D; i++) x[i] += out[i];
      if (F) {
        const h2 = layerNorm(x, T, D, w[`${l}.ln2.g`], w[`${l}.ln2.b`]);
        const hidden = matmul(h2, T, D, w[`${l}.w_1`], F, w[`${l}.b_1`]);
        for (let i = 0; i < hidden.length; i++) if (hidden[i] < 0) hidden[i] = 0;
        const ff = matmul(hidden, T, F, w[`${l}.w_2`], D, w[`${l}.b_2`]);
        for (let i = 0; i < T * D; i++) x[i] += ff[i];
      }
    }
    const logits = matmul(layerNorm(x, T, D, w["ln_f.g"], w["ln_f.b"]), T, D, w.w_u, V, w.b_u);
    return { logits, attention, T, V };
  }

  // Positions k .. T-1 of a kback sequence are scored: the answer is the token k back.
  function scoreSequence(logits, tokens, T, V, k) {
    let correct = 0;
    for (let t = k; t < T; t++) {
      let best = 0;
      for (let v = 1; v < V; v++) if (logits[t * V + v] > logits[t * V + best]) best = v; // first maximum, as argmax
      if (best === tokens[t - k]) correct++;
    }
    return { correct, scored: T - k };
  }

  const pause = () => new Promise((resolve) => setTimeout(resolve, 0));

  // Accuracy on the first L tokens of every sequence; yields to the page after each sequence.
  // stillWanted() false stops it (returns null). onSequence(s, out) sees each forward pass.
  async function accuracy(model, sequences, L, k, options, stillWanted, onSequence) {
    let correct = 0, scored = 0;
    for (let s = 0; s < sequences.length; s++) {
      const tokens = sequences[s].slice(0, L);
      const out = forward(model, tokens, options);
      const r = scoreSequence(out.logits, tokens, L, out.V, k);
      correct += r.correct;
      scored += r.scored;
      if (onSequence) onSequence(s, out);
      await pause();
      if (stillWanted && !stillWanted()) return null;
    }
    return { correct, scored, accuracy: correct / scored };
  }

  window.mhaTinyDecoder = { halfToFloat, decodeTensor, loadModel, alibiSlopes, frequencies, ropeArguments, forward,
    accuracy, scoreSequence, learnedLimit, shareText };

  // ---- the widget ---------------------------------------------------------------------
  // Controls: method, RoPE scaling (RoPE only), length (slider and number, L_train marked),
  // layer and head. Shown: the accuracy at L on the shipped sequences with the number of scored
  // positions, the accuracy by length (points appear as they are computed), and the chosen
  // head's attention on sequence 1 (the last 32 queries and keys, plus a column for the weight
  // on all earlier keys). Work runs a sequence at a time between pauses, so the page never
  // freezes; a change of control abandons the work in flight.
  const SVGNS = "http://www.w3.org/2000/svg";
  const WINDOW = 32; // queries (and keys) the map shows
  // viridis at 0, 1/8, ..., 1 (the static figures' map for weights)
  const STOPS = [[68, 1, 84], [71, 44, 122], [59, 81, 139], [44, 113, 142], [33, 144, 141], [39, 173, 129],
    [92, 200, 99], [170, 220, 50], [253, 231, 37]];

  function viridis(t) {
    const x = Math.min(1, Math.max(0, t)) * (STOPS.length - 1);
    const i = Math.min(STOPS.length - 2, Math.floor(x));
    return STOPS[i].map((v, j) => Math.round(v + (STOPS[i + 1][j] - v) * (x - i)));
  }

  // a weight or an accuracy (0 to 1) to `digits` decimals, as the figures write one (style.fixed,
  // style.share): one that is not zero never reads 0.000 (3.2e-5), one that is not all never 1.000
  function shareText(v, digits) {
    if (v > 0 && Number(v.toFixed(digits)) === 0) return v.toExponential(1);
    while (v < 1 && Number(v.toFixed(digits)) === 1) digits++;
    return v.toFixed(digits);
  }

  function svg(tag, attrs, text) {
    const node = document.createElementNS(SVGNS, tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
    if (text !== undefined) node.textContent = text;
    return node;
  }

  const STYLE = `
.mha-td .mha-td-length { display: grid; grid-template-columns: auto minmax(8rem, 18rem) 4.6em; gap: 0.2rem 0.4rem;
  align-items: center; justify-content: start; font-size: 0.75rem; margin-bottom: 0.4rem; }
.mha-td .mha-td-slider { position: relative; padding-bottom: 1.1rem; }
.mha-td .mha-td-slider input { width: 100%; min-width: 0; margin: 0; accent-color: var(--md-primary-fg-color); }
[data-md-color-scheme="slate"] .mha-td .mha-td-slider input { accent-color: var(--md-accent-fg-color); }
.mha-td .mha-td-tick { position: absolute; top: 1.1rem; white-space: nowrap;
  font-size: 0.65rem; color: var(--md-default-fg-color--light); transform: translateX(-0.4em); }
.mha-td .mha-td-length input[type=number] { width: 100%; box-sizing: border-box; font: inherit; color: var(--md-default-fg-color);
  background: var(--md-default-bg-color); border: 1px solid var(--md-default-fg-color--light); }
@container mha-explorer (max-width: 520px) {
  .mha-td .mha-td-length { grid-template-columns: 6.5rem minmax(0, 1fr) 4.2em; }
}
.mha-td .mha-td-message { color: var(--md-typeset-color); border-left: 0.2rem solid #e6a700; padding-left: 0.5rem;
  font-size: 0.75rem; margin: 0.4rem 0; }
.mha-td .mha-td-result { font-size: 0.8rem; margin: 0.4rem 0; font-variant-numeric: tabular-nums; }
.mha-td .mha-td-figures { display: flex; flex-wrap: wrap; gap: 0.8rem 1.2rem; }
.mha-td figure { margin: 0; flex: 1 1 15rem; min-width: 0; max-width: 28rem; }
.mha-td figcaption { font-size: 0.7rem; text-align: left; margin: 0.2rem 0 0; max-width: none; }
.mha-td canvas:focus-visible, .mha-td svg:focus-visible { outline: 2px solid var(--md-accent-fg-color); outline-offset: 2px; }
.mha-td .mha-td-readout { font-size: 0.7rem; min-height: 1.3em; margin: 0.2rem 0; font-variant-numeric: tabular-nums; }
`;

  function addStyle() {
    if (document.getElementById("mha-td-style")) return;
    const node = document.createElement("style");
    node.id = "mha-td-style";
    node.textContent = STYLE;
    document.head.appendChild(node);
  }

  function init(ui, data) {
    const X = window.mhaExplorers;
    const el = X.el;
    addStyle();
    ui.classList.add("mha-td");
    const models = {}; // decoded on first use: a reader who never comes here spends nothing on them
    const modelOf = (key) => models[key] || (models[key] = loadModel(data.models[key]));
    const Ltrain = data.L_train, k = data.k, lo = data.min_length, hi = data.max_length;
    let uid = 0;
    const id = () => `mha-td-${++uid}`;

    function select(label, options) {
      const sid = id();
      const node = el("select", { id: sid }, options.map(([value, text]) => el("option", { value, text })));
      return { wrap: el("div", { class: "mha-control" }, [el("label", { for: sid, text: label }), node]), node };
    }
    const method = select("method", data.methods.map((m) => [m.model, m.label]));
    method.node.value = data.methods.find((m) => m.method === "rope").model;
    const scaling = select("RoPE scaling", [["none", "none"], ["interpolation", "position interpolation"],
      ["ntk", "NTK-aware"]]);
    const layer = select("layer", [["0", "1"], ["1", "2"]]);
    const head = select("head", Array.from({ length: 4 }, (_, h) => [String(h), String(h + 1)]));
    layer.node.value = "1";

    const rid = id(), nid = id(), listId = id();
    const range = el("input", { type: "range", id: rid, min: lo, max: hi, step: 1, value: 2 * Ltrain, list: listId });
    const number = el("input", { type: "number", id: nid, min: lo, max: hi, step: 1, value: 2 * Ltrain,
      "aria-label": "sequence length L, typed" });
    const ticks = el("datalist", { id: listId }, [el("option", { value: Ltrain, label: `L_train = ${Ltrain}` })]);
    // the training length marked under the slider, where the thumb's centre is at L_train
    const at = (Ltrain - lo) / (hi - lo);
    const tick = el("span", { class: "mha-td-tick", "aria-hidden": "true", text: `▲ L_train = ${Ltrain}`,
      style: `left: calc(8px + ${at.toFixed(4)} * (100% - 16px))` });
    range.setAttribute("aria-describedby", `${listId}-mark`);
    const lengthWrap = el("div", { class: "mha-td-length" }, [
      el("label", { for: rid, text: "sequence length L" }), el("div", { class: "mha-td-slider" }, [range, tick]), number, ticks,
      el("span", { class: "mha-sr-only", id: `${listId}-mark`, text: `The training length is ${Ltrain} tokens.` })]);

    const message = el("p", { class: "mha-td-message", role: "status" });
    message.hidden = true;
    const result = el("p", { class: "mha-td-result", "data-state": "busy" });
    const curve = svg("svg", { role: "img", class: "mha-td-curve" });
    const curveCap = el("figcaption", { text: "Accuracy by length, computed here; dashed: L_train." });
    const canvas = el("canvas", { tabindex: "0", class: "mha-td-map" });
    const readout = el("p", { class: "mha-td-readout", "aria-hidden": "true" });
    const mapCap = el("figcaption", {});
    const live = el("p", { class: "mha-sr-only", "aria-live": "polite", "aria-atomic": "true" });
    ui.append(el("div", { class: "mha-controls" }, [method.wrap, scaling.wrap, layer.wrap, head.wrap]), lengthWrap,
      message, result, el("div", { class: "mha-td-figures" }, [
        el("figure", {}, [curve, curveCap]), el("figure", {}, [canvas, readout, mapCap])]), live);

    let job = 0;
    const cache = new Map(); // "model|scaling|L" -> {correct, scored, accuracy} or {undefined: true}
    let map = null; // {weights (T, T) of the chosen head, T}
    let cursor = null; // [query, key] of the map's keyboard cursor
    let sayTimer = null;
    const say = (text) => { clearTimeout(sayTimer); sayTimer = setTimeout(() => { live.textContent = text; }, 300); };

    function state() {
      const model = modelOf(method.node.value);
      const sc = model.config.method === "rope" && scaling.node.value !== "none" ? scaling.node.value : null;
      return { key: method.node.value, model, scaling: sc, label: method.node.selectedOptions[0].textContent };
    }
    const optionsAt = (s, L) => (s.scaling ? { scaling: s.scaling, factor: Math.max(1, L / Ltrain) } : {});
    const cacheKey = (s, L) => `${s.key}|${s.scaling}|${L}`;

    // The length typed or dragged, or a message saying what is allowed.
    function readLength(source) {
      const text = String(source.value).trim();
      const L = Number(text);
      if (text === "" || !Number.isInteger(L) || L < lo || L > hi) {
        return { error: `The length must be a whole number from ${lo} to ${hi}; got "${text}". ` +
          "The widget keeps the last valid length until then." };
      }
      return { L };
    }

    function show(text, kind) {
      message.textContent = text || "";
      message.hidden = !text;
      message.dataset.kind = text ? kind || "run" : "";
    }

    function drawCurve(s, L) {
      const width = Math.max(260, Math.min(448, curve.parentNode.clientWidth || 320)), height = 190;
      const left = 44, right = 10, top = 10, bottom = 40;
      curve.setAttribute("viewBox", `0 0 ${width} ${height}`);
      curve.setAttribute("width", width);
      curve.setAttribute("height", height);
      curve.replaceChildren();
      const fg = getComputedStyle(ui).color;
      const xOf = (v) => left + ((Math.log2(v) - Math.log2(lo)) / (Math.log2(hi) - Math.log2(lo))) * (width - left - right);
      const yOf = (a) => top + (1 - a) * (height - top - bottom);
      curve.append(svg("line", { x1: left, x2: width - right, y1: yOf(0), y2: yOf(0), stroke: fg, "stroke-opacity": 0.5 }));
      for (const a of [0, 0.5, 1]) {
        curve.append(svg("text", { x: left - 6, y: yOf(a) + 4, "text-anchor": "end", fill: fg, "font-size": 12 }, a.toFixed(1)));
        curve.append(svg("line", { x1: left, x2: width - right, y1: yOf(a), y2: yOf(a), stroke: fg, "stroke-opacity": 0.15 }));
      }
      for (const v of [8, 16, 32, 64, 128, 256]) {
        curve.append(svg("text", { x: xOf(v), y: yOf(0) + 16, "text-anchor": "middle", fill: fg, "font-size": 12 }, String(v)));
      }
      curve.append(svg("text", { x: (left + width - right) / 2, y: height - 6, "text-anchor": "middle", fill: fg,
        "font-size": 12 }, "length L (tokens, log scale)"));
      curve.append(svg("line", { x1: xOf(Ltrain), x2: xOf(Ltrain), y1: top, y2: yOf(0), stroke: fg,
        "stroke-dasharray": "4 3", "stroke-opacity": 0.7 }));
      const points = [];
      for (let v = lo; v <= hi; v++) {
        const r = cache.get(cacheKey(s, v));
        if (r && !r.undefined) points.push([v, r.accuracy]);
      }
      const accent = getComputedStyle(ui).getPropertyValue("--md-accent-fg-color").trim() || "#526cfe";
      if (points.length > 1) {
        curve.append(svg("polyline", { points: points.map(([v, a]) => `${xOf(v)},${yOf(a)}`).join(" "), fill: "none",
          stroke: accent, "stroke-width": 2 }));
      }
      for (const [v, a] of points) {
        curve.append(svg("circle", { cx: xOf(v), cy: yOf(a), r: v === L ? 5 : 3, fill: v === L ? fg : accent }));
      }
      const shown = points.map(([v, a]) => `${v}: ${shareText(a, 2)}`).join(", ");
      curve.setAttribute("aria-label", `Accuracy by length for ${s.label}${s.scaling ? ` with ${s.scaling}` : ""}: ` +
        (shown || "not computed yet") + `. Training length ${Ltrain}.`);
    }

    // The chosen head's weights on sequence 1: rows = the last W queries, columns = one for all
    // earlier keys (when there are any) then the last W keys.
    function mapLayout() {
      const T = map.T, W = Math.min(WINDOW, T), first = T - W, earlier = first > 0 ? 1 : 0;
      return { T, W, first, earlier, cols: W + earlier };
    }

    function weightAt(q, col) {
      const m = mapLayout();
      const i = m.first + q;
      if (m.earlier && col === 0) {
        let s = 0;
        for (let j = 0; j < m.first; j++) s += map.weights[i * m.T + j];
        return { text: m.first === 1 ? "key 0" : `keys 0 to ${m.first - 1} together`, value: s, i };
      }
      const j = m.first + col - m.earlier;
      return { text: `key ${j}${i - j === k ? ` (${k} back: the answer)` : ""}`, value: j <= i ? map.weights[i * m.T + j] : 0, i };
    }

    function drawMap() {
      const ctx = canvas.getContext("2d");
      const width = Math.max(260, Math.min(448, canvas.parentNode.clientWidth || 320));
      if (!map) {
        canvas.width = width;
        canvas.height = 0;
        canvas.style.height = "0px";
        return;
      }
      const m = mapLayout();
      const pad = { left: 40, top: 22, bottom: 8, gap: m.earlier ? 6 : 0 };
      const cell = Math.floor((width - pad.left - pad.gap - 4) / m.cols);
      const height = pad.top + cell * m.W + pad.bottom;
      const ratio = window.devicePixelRatio || 1;
      canvas.width = Math.round(width * ratio);
      canvas.height = Math.round(height * ratio);
      canvas.style.width = `${width}px`;
      canvas.style.height = `${height}px`;
      ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
      const fg = getComputedStyle(ui).color;
      ctx.font = "12px sans-serif";
      ctx.fillStyle = fg;
      for (let q = 0; q < m.W; q++) {
        for (let col = 0; col < m.cols; col++) {
          const x = pad.left + col * cell + (col >= m.earlier ? pad.gap : 0);
          const y = pad.top + q * cell;
          const w = weightAt(q, col);
          const future = !(m.earlier && col === 0) && m.first + col - m.earlier > w.i;
          if (future) continue; // causal: no weight, the page shows through
          const rgb = viridis(w.value);
          ctx.fillStyle = `rgb(${rgb[0]},${rgb[1]},${rgb[2]})`;
          ctx.fillRect(x, y, cell, cell);
        }
      }
      ctx.fillStyle = fg;
      ctx.textBaseline = "middle";
      ctx.textAlign = "right";
      for (let q = 0; q < m.W; q += 8) ctx.fillText(String(m.first + q), pad.left - 4, pad.top + (q + 0.5) * cell);
      ctx.fillText(String(m.T - 1), pad.left - 4, pad.top + (m.W - 0.5) * cell);
      ctx.textAlign = "left";
      ctx.textBaseline = "alphabetic";
      ctx.fillText(m.earlier ? `← earlier | keys ${m.first} to ${m.T - 1} →` : `keys 0 to ${m.T - 1} →`, pad.left, pad.top - 7);
      if (cursor) {
        const [q, col] = cursor;
        ctx.strokeStyle = fg;
        ctx.lineWidth = 2;
        ctx.strokeRect(pad.left + col * cell + (col >= m.earlier ? pad.gap : 0), pad.top + q * cell, cell, cell);
      }
      canvas._layout = { pad, cell, m };
    }

    function describeCell() {
      if (!map || !cursor) return "";
      const w = weightAt(cursor[0], cursor[1]);
      return `query ${w.i}, ${w.text}: weight ${shareText(w.value, 3)}`;
    }

    function moveCursor(q, col) {
      const m = mapLayout();
      cursor = [Math.min(m.W - 1, Math.max(0, q)), Math.min(m.cols - 1, Math.max(0, col))];
      readout.textContent = describeCell();
      say(readout.textContent);
      drawMap();
    }

    canvas.addEventListener("keydown", (e) => {
      if (!map) return;
      const [q, col] = cursor || [0, 0];
      const m = mapLayout();
      const to = { ArrowUp: [q - 1, col], ArrowDown: [q + 1, col], ArrowLeft: [q, col - 1], ArrowRight: [q, col + 1],
        Home: [q, 0], End: [q, m.cols - 1] }[e.key];
      if (!to) return;
      e.preventDefault();
      moveCursor(to[0], to[1]);
    });
    canvas.addEventListener("focus", () => { if (map && !cursor) moveCursor(mapLayout().W - 1, 0); });
    canvas.addEventListener("pointermove", (e) => {
      const g = canvas._layout;
      if (!map || !g) return;
      const box = canvas.getBoundingClientRect();
      const x = e.clientX - box.left - g.pad.left, y = e.clientY - box.top - g.pad.top;
      const q = Math.floor(y / g.cell);
      let col = Math.floor(x / g.cell);
      if (g.m.earlier && x > g.cell) col = Math.floor((x - g.pad.gap) / g.cell);
      if (q >= 0 && q < g.m.W && col >= 0 && col < g.m.cols) moveCursor(q, col);
    });

    function setMap(out) {
      const l = Number(layer.node.value), h = Number(head.node.value);
      map = out ? { weights: out.attention[l][h], T: out.T } : null;
      if (map && cursor) cursor = [Math.min(cursor[0], mapLayout().W - 1), Math.min(cursor[1], mapLayout().cols - 1)];
      const m = map && mapLayout();
      mapCap.textContent = map ? `Layer ${l + 1}, head ${h + 1} on sequence 1: the last ${m.W} queries` +
        (m.earlier ? `, a column for ${m.first === 1 ? "the 1 earlier key" : `all ${m.first} earlier keys`}, then the last ${m.W} keys.` : ".") +
        " Brighter: more weight (0 to 1). Focus the map and use the arrow keys to read a cell." :
        "No attention map: the model is not defined at this length.";
      canvas.setAttribute("aria-label", map ? `Attention map, layer ${l + 1}, head ${h + 1}, length ${map.T}. ` +
        "Arrow keys move between cells; the weight is read out below." : "No attention map at this length.");
      readout.textContent = describeCell();
      drawMap();
    }

    function showResult(s, L, r) {
      result.dataset.method = s.model.config.method;
      result.dataset.scaling = s.scaling || "none";
      result.dataset.length = String(L);
      if (r.undefined) {
        result.dataset.state = "undefined";
        delete result.dataset.accuracy;
        result.textContent = `${s.label} at L = ${L}: not defined.`;
        return;
      }
      result.dataset.state = "done";
      result.dataset.accuracy = String(r.accuracy);
      result.dataset.correct = String(r.correct);
      result.dataset.scored = String(r.scored);
      const n = data.sequences.length;
      result.textContent = `${s.label}${s.scaling ? ` (${scaling.node.selectedOptions[0].textContent})` : ""} at ` +
        `L = ${L}: accuracy ${shareText(r.accuracy, 3)}, ${r.correct} of ${r.scored} scored positions right ` +
        `(${n} sequences, positions ${k} to ${L - 1} of each).`;
      say(result.textContent);
    }

    async function run(L) {
      const my = ++job;
      const wanted = () => my === job;
      const s = state();
      scaling.node.disabled = s.model.config.method !== "rope";
      drawCurve(s, L);
      const c = s.model.config;
      if (c.method === "learned" && L > c.max_len) {
        show(learnedLimit(c, L));
        cache.set(cacheKey(s, L), { undefined: true });
        showResult(s, L, { undefined: true });
        setMap(null);
      } else {
        show("");
        result.dataset.state = "busy";
        result.dataset.length = String(L);
        result.dataset.method = c.method;
        result.dataset.scaling = s.scaling || "none";
        result.textContent = `Computing ${s.label} at L = ${L} …`;
        const key = cacheKey(s, L);
        let r = cache.get(key);
        if (!r) {
          r = await accuracy(s.model, data.sequences, L, k, optionsAt(s, L), wanted,
            (i, out) => { if (i === 0) mapSource = { key, out }; });
          if (!r) return;
          cache.set(key, r);
        }
        if (!mapSource || mapSource.key !== key) {
          mapSource = { key, out: forward(s.model, data.sequences[0].slice(0, L), optionsAt(s, L)) };
        }
        setMap(mapSource.out);
        showResult(s, L, r);
      }
      drawCurve(s, L);
      for (const v of data.lengths) { // the curve, one length at a time
        if (!wanted()) return;
        if (cache.has(cacheKey(s, v))) continue;
        if (c.method === "learned" && v > c.max_len) { cache.set(cacheKey(s, v), { undefined: true }); continue; }
        const r = await accuracy(s.model, data.sequences, v, k, optionsAt(s, v), wanted);
        if (!r) return;
        cache.set(cacheKey(s, v), r);
        drawCurve(s, L);
      }
    }
    let mapSource = null;
    let current = 2 * Ltrain;

    function changed(source) {
      const got = readLength(source);
      if (got.error) {
        show(got.error, "length");
        return;
      }
      current = got.L;
      if (source !== range) range.value = String(current);
      if (source !== number) number.value = String(current);
      // the ratio to two decimals, after "≈" where that is not the ratio itself (33 / 32 = 1.03125)
      const ratio = current / Ltrain, ratioText = ratio.toFixed(2);
      const times = `${Number(ratioText) === ratio ? "" : "≈ "}${ratioText} times the training length`;
      range.setAttribute("aria-valuetext", `${current} tokens${current > Ltrain ? `, ${times}` : ""}`);
      mapSource = null;
      start();
    }
    // A run that fails says so in the page (the static figure's numbers stay right above it).
    function start() {
      run(current).catch((err) => {
        result.dataset.state = "error";
        result.textContent = "";
        show(`The model could not run: ${err.message}`);
        throw err;
      });
    }
    range.addEventListener("input", () => changed(range));
    number.addEventListener("change", () => changed(number));
    number.addEventListener("input", () => {
      const got = readLength(number);
      if (got.error) show(got.error, "length");
      else if (message.dataset.kind === "length") show("");
    });
    for (const c of [method.node, scaling.node]) c.addEventListener("change", () => { mapSource = null; start(); });
    for (const c of [layer.node, head.node]) {
      c.addEventListener("change", () => { if (mapSource) setMap(mapSource.out); });
    }
    if (typeof ResizeObserver !== "undefined") {
      new ResizeObserver(() => { drawMap(); drawCurve(state(), current); }).observe(ui);
    }
    // The models run once the widget comes into view (and at once where that cannot be observed).
    result.dataset.state = "waiting";
    result.textContent = "The models run when this widget comes into view.";
    if (typeof IntersectionObserver === "undefined") changed(range);
    else {
      const seen = new IntersectionObserver((entries) => {
        if (!entries.some((e) => e.isIntersecting)) return;
        seen.disconnect();
        if (result.dataset.state === "waiting") changed(range);
      });
      seen.observe(ui);
    }
  }
  window.mhaExplorers.register("extrapolation", init);
})();
