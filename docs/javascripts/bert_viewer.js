// Attention viewers (page: look inside a real model): widget "bert" for all-MiniLM-L6-v2,
// widget "tiny" for the tiny decoders trained on this site.
//
// Shows one head of a model on a built-in input as lines between a column of query tokens
// and a column of key tokens, and all heads as thumbnails labelled with a head score.
// Nothing is computed here: the build ran mhalib's forward pass and put every weight on the
// page (figures/real_model/bert_viewer.py, figures/experiments/tiny_viewer.py), each as
// q = round(1000 w), two base64url characters per weight, in the order layer, head, query,
// key. A weight is shown as q / 1000 with three decimals, exactly as stored; one that is not 0
// but rounds to 0 reads "<0.0005", one that is not all but rounds to 1 ">0.9995". The tiny
// decoders are causal: a query's weights on later keys are exactly 0, so only the lower
// triangle (keys 0..i of query i) is stored, and the viewer greys those later keys out as
// "masked". The BERT viewer also shows a sentence the reader types: the live model
// (bert_live.js) computes its weights and hands them to ui.mhaShowSentence; they are shown to
// three decimals too, and kept in full for the CSV. The head on show can be saved as SVG, PNG or
// CSV. Plain DOM and SVG; no framework; nothing fetched here.
(function () {
  "use strict";

  const SVG_NS = "http://www.w3.org/2000/svg";
  const VIRIDIS = ["#440154", "#472d7b", "#3b528b", "#2c728e", "#21918c", "#28ae80", "#5ec962", "#addc30", "#fde725"];
  // A thumbnail's cells above the diagonal (a causal model's later keys: no weight, not a low one)
  // are left transparent: bert_viewer.css hatches the canvas behind them in the page's own
  // colours (a fixed grey glared on the dark page).
  const NAMES = {
    "previous token": "previous token", "next token": "next token", self: "self", "to [CLS]": "[CLS]",
    "to [SEP]": "[SEP]", "to punctuation": "punctuation", entropy: "spread", broad: "broad", induction: "induction",
  };
  const HEAD_NAMES = { ...NAMES, "previous token": "previous-token", "next token": "next-token" };

  // ---- the stored weights -----------------------------------------------------------
  function decode(codes, alphabet) {
    const digit = {};
    for (let i = 0; i < alphabet.length; i++) digit[alphabet[i]] = i;
    const out = new Uint16Array(codes.length / 2);
    for (let k = 0; k < out.length; k++) out[k] = digit[codes[2 * k]] * 64 + digit[codes[2 * k + 1]];
    return out;
  }

  // A causal model's lower triangles (per layer and head: query i, keys 0..i) -> full T x T
  // blocks in the order layer, head, query, key, with 0 above the diagonal.
  function decodeCausal(codes, alphabet, L, H, T) {
    const tri = decode(codes, alphabet), n = (T * (T + 1)) / 2;
    if (tri.length !== L * H * n) throw new Error(`causal codes hold ${tri.length} weights, expected ${L * H * n}`);
    const out = new Uint16Array(L * H * T * T);
    let k = 0;
    for (let b = 0; b < L * H; b++)
      for (let i = 0; i < T; i++)
        for (let j = 0; j <= i; j++) out[(b * T + i) * T + j] = tri[k++];
    return out;
  }

  // Beside 0..1000, two codes (bert_viewer.py): a weight above 0 that rounds to 0 per mille, and
  // one below 1 that rounds to 1000; they draw as 0 and 1000 and read "<0.0005" and ">0.9995".
  const TINY = 1001, NEARLY_ALL = 1002;
  const amount = (q) => (q === TINY ? 0 : q === NEARLY_ALL ? 1000 : q);
  // a weight (0..1) as stored: round(1000 w), or the code that says it is not 0 or not all
  function code(v) {
    const q = Math.round(1000 * v);
    return v > 0 && q === 0 ? TINY : v < 1 && q === 1000 ? NEARLY_ALL : q;
  }

  // q per mille -> "0.123": integer arithmetic, so the text is exactly the stored rounding.
  function permille(q) {
    if (q === TINY) return "<0.0005";
    if (q === NEARLY_ALL) return ">0.9995";
    return `${Math.floor(q / 1000)}.${String(q % 1000).padStart(3, "0")}`;
  }

  // a share in whole percents, with the decimals that tell one that is not all from 100% and one
  // that is not none from 0% (one miss in 1,088 is 99.9%, not 100%)
  function percentText(x) {
    let digits = 0, text = (100 * x).toFixed(digits);
    while (((x < 1 && Number(text) === 100) || (x > 0 && Number(text) === 0)) && digits < 15) text = (100 * x).toFixed(++digits);
    if (x > 0 && Number(text) === 0) text = (100 * x).toPrecision(2);  // under 1e-15 %: toFixed stops there
    return `${text}%`;
  }

  // a score as bert_viewer.as_shown stored it: 2 decimals, or every digit it kept (0.9998, not 1.00)
  function score(v) {
    if (v === null || v === undefined) return "–";
    const text = v.toFixed(2);
    return Number(text) === v ? text : String(v);
  }

  // ---- one or more models, each with its inputs ---------------------------------------
  function prepare(data) {
    if (!data.models) { // the BERT payload: one model, its sentences
      return [{
        key: "bert", title: null, task: null, layers: data.layers, heads: data.heads, types: data.types,
        short: data.short, threshold: data.threshold, scores: data.scores, sentence_scores: data.sentence_scores,
        label: data.label, label_value: data.label_value, strong: data.strong, sentence_labels: data.sentence_labels,
        causal: false, typeLabel: "bert",
        sentences: data.sentences.map((s) => ({ text: s.text, tokens: s.tokens, w: decode(s.codes, data.alphabet) })),
      }];
    }
    return data.models.map((m) => ({
      ...m, short: data.short, threshold: data.threshold, causal: data.causal, typeLabel: "best",
      k: data.tasks[m.task].k,
      sentences: data.tasks[m.task].sequences.map((s, n) => ({
        ...s, predicted: m.predicted[n], w: decodeCausal(m.codes[n], data.alphabet, m.layers, m.heads, s.tokens.length),
      })),
    }));
  }

  // ---- the viewer -------------------------------------------------------------------
  let uid = 0;

  function init(ui, data) {
    const { el, colour } = window.mhaExplorers;
    const models = prepare(data);
    const tiny = Boolean(data.models);
    const unit = tiny ? "sequence" : "sentence";
    const builtIn = models[0].sentences.length; // the stored sentences (a reader's own one comes after them)
    const state = {
      m: (data.start.model || 1) - 1, s: data.start.sentence - 1, l: data.start.layer - 1, h: data.start.head - 1,
      by: "type", // what the thumbnails' labels show: "type" or one of the model's types
      from: "average", // where the BERT labels' scores come from: "average" (built-in sentences) or "sentence"
      cursor: { side: "q", i: 1 }, // the head view's one tab stop
      pinned: null, hover: null, focused: null,
    };
    const id = "bv-" + ++uid;
    const model = () => models[state.m];
    const sentence = () => model().sentences[state.s];

    // weight of query i on key j, per mille, in the selected head of the selected input
    function q(i, j) {
      const s = sentence(), T = s.tokens.length;
      return s.w[((state.l * model().heads + state.h) * T + i) * T + j];
    }
    // may query i attend to key j? (a causal model: only to itself and earlier keys)
    function allowed(i, j) {
      return !model().causal || j <= i;
    }

    // ---- controls
    function select(label, key, options) {
      const sel = el("select", { id: `${id}-${key}` });
      fill(sel, options);
      const wrap = el("div", { class: "mha-control" }, [el("label", { for: sel.id, text: label }), sel]);
      return { sel, wrap };
    }
    function fill(sel, options) {
      sel.replaceChildren(...options.map(([value, text]) => el("option", { value, text })));
    }
    // option values count from 1, as the labels do
    const sentenceOptions = () => model().sentences.map((s, k) => [String(k + 1), s.live ? `Yours: ${s.text}` : `${k + 1}. ${s.text}`]);
    const sentenceSel = select(tiny ? "Sequence" : "Sentence", "sentence", sentenceOptions());
    const layerSel = select("Layer", "layer", []);
    const headSel = select("Head", "head", []);
    sentenceSel.wrap.classList.add("bv-sentence");
    let modelSel = null;
    if (tiny) {
      modelSel = select("Model", "model", []);
      modelSel.wrap.classList.add("bv-sentence");
      const groups = {};
      models.forEach((m, k) => {
        const task = m.task === "kback" ? `Copy the token ${m.k} back (kback)` : "Continue a repeated segment (repeat)";
        if (!groups[task]) { groups[task] = el("optgroup", { label: task }); modelSel.sel.appendChild(groups[task]); }
        groups[task].appendChild(el("option", { value: String(k + 1), text: m.task === "kback" ? m.method : m.title.replace(/^induction, /, "induction model, ") }));
      });
    }

    const about = el("p", { class: "bv-about" });
    const legend = el("p", { class: "bv-legend" });
    const summary = el("p", { class: "bv-summary" });
    const live = el("p", { class: "bv-live bv-sr", "aria-live": "polite", "aria-atomic": "true" });

    // ---- the head view: queries | lines | keys
    const qCol = el("div", { class: "bv-col bv-q" });
    const kCol = el("div", { class: "bv-col bv-k" });
    const svg = document.createElementNS(SVG_NS, "svg");
    svg.setAttribute("class", "bv-lines");
    svg.setAttribute("aria-hidden", "true");
    svg.setAttribute("preserveAspectRatio", "none");
    const headView = el("div", { class: "bv-head", role: "group" }, [
      el("div", { class: "bv-colhead bv-colhead-q", "aria-hidden": "true", text: "query" }),
      el("div", {}, []),
      el("div", { class: "bv-colhead bv-colhead-k", "aria-hidden": "true", text: "key" }),
      qCol, svg, kCol]);
    const readout = el("p", { class: "bv-readout" });

    // ---- the overview: a thumbnail per head
    const bySel = select("Label heads by", "by", []);
    const fromSel = tiny ? null : select("Scores from", "from", [["average", `the ${builtIn} built-in sentences (average)`],
      ["sentence", "this sentence alone"]]);
    // save the head on show (BERT): SVG and PNG of its lines, CSV of its weights
    const saveButtons = tiny ? [] : [["svg", "SVG"], ["png", "PNG"], ["csv", "CSV"]].map(([kind, text]) => {
      const b = el("button", { type: "button", class: "mha-button bv-save", "data-kind": kind, text,
        "aria-label": `Save this head as ${text}` });
      b.addEventListener("click", () => { save(kind, b).catch((err) => setTimeout(() => { throw err; })); });
      return b;
    });
    const grid = el("div", { class: "bv-grid", role: "radiogroup" });
    let thumbs = [];

    function buildControls() {
      const m = model();
      fill(layerSel.sel, Array.from({ length: m.layers }, (_, k) => [String(k + 1), String(k + 1)]));
      fill(headSel.sel, Array.from({ length: m.heads }, (_, k) => [String(k + 1), String(k + 1)]));
      fill(sentenceSel.sel, sentenceOptions());
      const typeText = m.typeLabel === "bert" ? "type (the kind of key that gets half the weight)"
        : "type (its highest score; bold from 0.50)";
      fill(bySel.sel, [["type", typeText]].concat(
        m.types.map((t) => [t, t === "entropy" ? "spread (normalised entropy)" : `${NAMES[t] || t} score`])));
      if (state.by !== "type" && !m.types.includes(state.by)) state.by = "type";
      bySel.sel.value = state.by;
    }

    function buildGrid() {
      const m = model(), L = m.layers, H = m.heads;
      grid.style.setProperty("--bv-cols", String(H));
      grid.setAttribute("aria-label", `All ${L * H} heads: layers 1 to ${L} (rows) by heads 1 to ${H} (columns)`);
      const cells = [el("div", { class: "bv-corner", "aria-hidden": "true", text: "layer \\ head" })];
      for (let h = 0; h < H; h++) cells.push(el("div", { class: "bv-colno", "aria-hidden": "true", text: String(h + 1) }));
      thumbs = [];
      for (let l = 0; l < L; l++) {
        cells.push(el("div", { class: "bv-rowno", "aria-hidden": "true", text: String(l + 1) }));
        for (let h = 0; h < H; h++) {
          const canvas = el("canvas", { "aria-hidden": "true" });
          // its name is what it shows, after "Layer 1, head 3:"
          const where = el("span", { class: "bv-sr", text: `Layer ${l + 1}, head ${h + 1}: ` });
          const name = el("span", { class: "bv-lab" });
          const value = el("span", { class: "bv-val" });
          const b = el("button", { type: "button", class: "bv-thumb", role: "radio", tabindex: "-1",
            "data-layer": String(l + 1), "data-head": String(h + 1) }, [where, canvas, name, value]);
          b.addEventListener("click", () => choose(l, h, true));
          cells.push(b);
          thumbs.push({ b, canvas, name, value, l, h });
        }
      }
      grid.replaceChildren(...cells);
    }
    grid.addEventListener("keydown", (e) => {
      const L = model().layers, H = model().heads;
      const step = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] }[e.key];
      let l = state.l, h = state.h;
      if (step) { l = Math.min(L - 1, Math.max(0, l + step[0])); h = Math.min(H - 1, Math.max(0, h + step[1])); }
      else if (e.key === "Home") h = 0;
      else if (e.key === "End") h = H - 1;
      else return;
      e.preventDefault();
      choose(l, h, true);
      thumbs[l * H + h].b.focus();
    });

    ui.classList.add("bv");
    if (tiny) ui.classList.add("bv-tiny");
    ui.append(
      el("div", { class: "mha-controls" }, [...(modelSel ? [modelSel.wrap] : []), sentenceSel.wrap, layerSel.wrap, headSel.wrap]),
      ...(tiny ? [about, summary, legend] : [summary]), headView, readout,
      ...(tiny ? [] : [el("div", { class: "bv-export" }, [el("span", { text: "Save this head:" }), ...saveButtons])]),
      el("div", { class: "mha-controls bv-overview-controls" }, [bySel.wrap, ...(fromSel ? [fromSel.wrap] : [])]),
      el("div", { class: "bv-scroll" }, [grid]),
      live);

    // ---- what a head is labelled with
    // The labels' table: the averages over the built-in inputs, or (BERT, "this sentence alone")
    // the labels of the sentence on show, made by the same rule from its scores before they were
    // rounded (figures/real_model/bert_viewer.py: the kind of key with the highest score, if it
    // reaches the threshold, else "broad" with the head's spread).
    function table() {
      const m = model();
      if (tiny || state.from === "average") return m;
      const own = m.sentence_labels[state.s];
      return { label: own.label, label_value: own.label_value, strong: own.strong, scores: m.sentence_scores[state.s] };
    }
    // The same rule in the browser, for the reader's own sentence, whose scores the live model
    // computed here (a missing score, null or NaN, never wins).
    function labelsOf(scores, m) {
      const kinds = m.types.filter((t) => t !== "entropy");
      const label = [], label_value = [];
      for (let l = 0; l < m.layers; l++) {
        label.push([]); label_value.push([]);
        for (let h = 0; h < m.heads; h++) {
          let top = null;
          for (const k of kinds) {
            const v = scores[k][l][h];
            if (v !== null && !Number.isNaN(v) && (top === null || v > scores[top][l][h])) top = k;
          }
          const strong = top !== null && scores[top][l][h] >= m.threshold;
          label[l].push(strong ? top : "broad");
          label_value[l].push(strong ? scores[top][l][h] : scores.entropy[l][h]);
        }
      }
      const strong = {};
      for (const k of kinds) strong[k] = scores[k].flat().map((v) => (v !== null && v >= m.threshold ? "1" : "0")).join("");
      return { label, label_value, strong };
    }

    function label(l, h) {
      const m = model(), t = table();
      if (state.by === "type") {
        const kind = t.label[l][h], value = t.label_value[l][h];
        return { kind, name: m.short[kind] || kind, value, strong: kind !== "broad" && strongAt(t, kind, l, h, value) };
      }
      const v = t.scores[state.by][l][h];
      // bold by the unrounded score's flag (figures/real_model/bert_viewer.py strong_flags): a
      // score of 0.4965 shows as 0.50 and is not half of the weight
      const strong = strongAt(t, state.by, l, h, v);
      return { kind: state.by, name: m.short[state.by] || state.by, value: v, strong };
    }
    // Whether a head's score of ``kind`` reaches the threshold: by the unrounded score's flag where
    // the payload has one (a score of 0.4965 shows as 0.50 and is not half of the weight), else by
    // the value, which is then unrounded (the reader's own sentence, scored here).
    function strongAt(t, kind, l, h, value) {
      const flags = t.strong && t.strong[kind];
      if (flags) return flags[l * model().heads + h] === "1";
      return value !== null && !Number.isNaN(value) && value >= model().threshold;
    }

    function describeHead() {
      const m = model(), l = state.l, h = state.h, kind = m.label[l][h];
      const avg = m.label_value[l][h];
      if (m.typeLabel === "best") {
        const here = m.sentence_scores[state.s][kind][l][h];
        const over = `on average over ${data.n_eval} sequences of the task, ${score(here)} on this one`;
        const job = HEAD_NAMES[kind] || kind.replace(" ", "-");
        if (strongAt(m, kind, l, h, avg))
          return `Layer ${l + 1}, head ${h + 1} is ${/^[aeiou]/.test(job) ? "an" : "a"} ${job} head: ` +
            `its ${NAMES[kind] || kind} score is ${score(avg)} ${over}.`;
        return `Layer ${l + 1}, head ${h + 1} has no clear job by these scores: its highest, ` +
          `the ${NAMES[kind] || kind} score, is ${score(avg)} ${over}.`;
      }
      const n = builtIn;
      if (state.from === "sentence") { // this sentence's own label first, the average after it
        const t = table(), own = t.label[l][h], key = own === "broad" ? "entropy" : own;
        const value = t.label_value[l][h], mean = m.scores[key][l][h];
        const avg = `${score(mean)} on average over the ${n} built-in sentences`;
        if (own === "broad")
          return `On this sentence, layer ${l + 1}, head ${h + 1} is broad: no kind of key gets half of its weight; ` +
            `its spread (normalised entropy) is ${score(value)} (${avg}).`;
        return `On this sentence, layer ${l + 1}, head ${h + 1} is a ${HEAD_NAMES[own]} head: ${score(value)} of its ` +
          `weight goes ${own === "self" ? "to the token itself" : "there"} (${avg}).`;
      }
      const key = kind === "broad" ? "entropy" : kind;
      const here = m.sentence_scores[state.s][key][l][h];
      if (kind === "broad")
        return `Layer ${l + 1}, head ${h + 1} is broad: no kind of key gets half of its weight; ` +
          `its spread (normalised entropy) is ${score(avg)} on average over ${n} sentences, ${score(here)} on this one.`;
      return `Layer ${l + 1}, head ${h + 1} is a ${HEAD_NAMES[kind]} head: ${score(avg)} of its weight goes ` +
        `${kind === "self" ? "to the token itself" : "there"} on average over ${n} sentences, ${score(here)} on this one.`;
    }

    function describeModel() {
      const m = model();
      const right = `${percentText(m.accuracy)} of its answers right on ${data.n_eval} sequences of ${data.length} tokens`;
      const task = m.task === "kback"
        ? `Task: at each position from the ${ordinal(m.k + 1)} on, output the token ${m.k} back.`
        : "Task: in the repeat, output the token that followed the current one in the segment.";
      return `${m.title}: ${right}. ${task}`;
    }

    function shortHead() {
      const lab = label(state.l, state.h);
      return `Layer ${state.l + 1}, head ${state.h + 1}: ${NAMES[lab.kind] || lab.kind} ${score(lab.value)}`;
    }

    // ---- drawing
    function drawThumbs() {
      const m = model(), s = sentence(), T = s.tokens.length, H = m.heads;
      for (const t of thumbs) {
        t.canvas.width = T; t.canvas.height = T;
        const ctx = t.canvas.getContext("2d");
        const img = ctx.createImageData(T, T);
        for (let i = 0; i < T; i++) {
          for (let j = 0; j < T; j++) {
            if (!allowed(i, j)) continue; // transparent (createImageData starts at 0, 0, 0, 0)
            const rgb = colour(VIRIDIS, amount(s.w[((t.l * H + t.h) * T + i) * T + j]) / 1000);
            const p = 4 * (i * T + j);
            img.data[p] = rgb[0]; img.data[p + 1] = rgb[1]; img.data[p + 2] = rgb[2]; img.data[p + 3] = 255;
          }
        }
        ctx.putImageData(img, 0, 0);
      }
    }

    function drawLabels() {
      for (const t of thumbs) {
        const lab = label(t.l, t.h);
        t.name.textContent = lab.name;
        t.value.textContent = score(lab.value);
        t.b.classList.toggle("bv-strong", lab.strong);
        t.b.title = `Layer ${t.l + 1}, head ${t.h + 1}: ${NAMES[lab.kind] || lab.kind} ${score(lab.value)}`;
      }
    }

    function drawSelection() {
      for (const t of thumbs) {
        const on = t.l === state.l && t.h === state.h;
        t.b.setAttribute("aria-checked", on ? "true" : "false");
        t.b.tabIndex = on ? 0 : -1;
      }
      layerSel.sel.value = String(state.l + 1);
      headSel.sel.value = String(state.h + 1);
      sentenceSel.sel.value = String(state.s + 1);
      if (modelSel) modelSel.sel.value = String(state.m + 1);
      if (tiny) {
        about.textContent = describeModel();
        drawLegend();
      }
      summary.textContent = describeHead();
      ui.dataset.sentence = String(state.s + 1);
      ui.dataset.layer = String(state.l + 1);
      ui.dataset.head = String(state.h + 1);
      if (tiny) ui.dataset.model = model().key;
    }

    // the tiny models' key to the head view: the parts of a repeat sequence, the answer, the mask
    function drawLegend() {
      const chip = (role, text) => el("span", { class: "bv-t", "data-role": role, "aria-hidden": "true", text });
      const item = (children) => el("span", { class: "bv-legend-item" }, children);
      const items = [];
      if (model().task === "repeat")
        items.push(item([chip("prefix", "7"), " prefix"]), item([chip("segment", "7"), " segment"]),
          item([chip("repeat", "7"), " its repeat"]));
      items.push(item([el("span", { class: "bv-t bv-legend-answer", "aria-hidden": "true", text: "7" }),
        model().task === "repeat" ? " holds the answer (after the earlier copy)" : ` holds the answer (${model().k} back)`]));
      items.push(item([el("span", { class: "bv-t bv-legend-masked", "aria-hidden": "true", text: "7" }),
        " masked: later, weight 0"]));
      legend.replaceChildren(...items);
    }

    function tokenButton(side, i, text, role) {
      // its name is what it shows (the token, and a weight when one is shown), after "query 3:"
      const w = el("span", { class: "bv-w" });
      const t = el("span", { class: "bv-t", text });
      if (role) t.dataset.role = role;
      const where = el("span", { class: "bv-sr", text: `${side === "q" ? "query" : "key"} ${i + 1}${role ? ` (${role})` : ""}: ` });
      const b = el("button", {
        type: "button", class: "bv-tok", tabindex: "-1", "data-side": side, "data-i": String(i), "aria-pressed": "false",
      }, side === "q" ? [where, w, t] : [where, t, w]);
      b.addEventListener("mouseenter", () => { state.hover = { side, i }; show(); });
      b.addEventListener("mouseleave", () => { state.hover = null; show(); });
      b.addEventListener("focus", () => {
        state.focused = { side, i };
        state.cursor = { side, i };
        roving();
        show();
        announce(tokenSummary(side, i, true));
      });
      b.addEventListener("blur", () => { state.focused = null; show(); });
      b.addEventListener("click", () => {
        const same = state.pinned && state.pinned.side === side && state.pinned.i === i;
        state.pinned = same ? null : { side, i };
        b.focus();
        show();
      });
      return b;
    }

    function drawHead() {
      const s = sentence(), T = s.tokens.length;
      if (state.cursor.i >= T) state.cursor.i = T - 1;
      if (state.pinned && state.pinned.i >= T) state.pinned = null;
      state.hover = null; // the tokens under the pointer are about to be replaced
      const role = (i) => (s.roles ? s.roles[i] : "");
      qCol.replaceChildren(...s.tokens.map((t, i) => tokenButton("q", i, t, role(i))));
      kCol.replaceChildren(...s.tokens.map((t, i) => tokenButton("k", i, t, role(i))));
      headView.style.setProperty("--bv-n", String(T));
      headView.setAttribute("aria-label",
        `Layer ${state.l + 1}, head ${state.h + 1}: ${T} query tokens and ${T} key tokens; ` +
        "use the arrow keys to move between tokens, Enter to keep one selected, Escape to let it go");
      svg.setAttribute("viewBox", `0 0 100 ${T}`);
      const lines = [];
      for (let i = 0; i < T; i++) {
        for (let j = 0; j < T; j++) {
          if (amount(q(i, j)) === 0) continue;
          const line = document.createElementNS(SVG_NS, "line");
          line.setAttribute("x1", "2"); line.setAttribute("x2", "98");
          line.setAttribute("y1", String(i + 0.5)); line.setAttribute("y2", String(j + 0.5));
          line.setAttribute("vector-effect", "non-scaling-stroke");
          line.dataset.i = String(i); line.dataset.j = String(j);
          lines.push(line);
        }
      }
      svg.replaceChildren(...lines);
      roving();
      show();
    }

    function roving() {
      for (const b of headView.querySelectorAll(".bv-tok")) {
        const on = b.dataset.side === state.cursor.side && Number(b.dataset.i) === state.cursor.i;
        b.tabIndex = on ? 0 : -1;
      }
    }

    // the key holding query i's answer, or the query whose answer key j holds (tiny models)
    function partner(side, i) {
      const answer = sentence().answer;
      if (!answer) return null;
      if (side === "q") return answer[i] === null || answer[i] === undefined ? null : answer[i];
      const k = answer.indexOf(i);
      return k < 0 ? null : k;
    }

    // what the head view shows: hover first, then keyboard focus, then the pinned token
    function show() {
      const active = state.hover || state.focused || state.pinned;
      const T = sentence().tokens.length;
      for (const line of svg.children) {
        const i = Number(line.dataset.i), j = Number(line.dataset.j), w = amount(q(i, j)) / 1000;
        const on = !active || (active.side === "q" ? i === active.i : j === active.i);
        // opacity grows with the weight; a selected token's faint lines stay just visible
        line.style.strokeOpacity = on ? String(active ? 0.12 + 0.88 * w : w) : "0";
        line.style.strokeWidth = on && active ? String(1 + 3 * w) : String(0.5 + 2 * w);
      }
      const mate = active ? partner(active.side, active.i) : null;
      for (const b of headView.querySelectorAll(".bv-tok")) {
        const side = b.dataset.side, i = Number(b.dataset.i);
        const wSpan = b.querySelector(".bv-w");
        const isActive = active && active.side === side && active.i === i;
        const other = active && active.side !== side;
        const masked = other && !(active.side === "q" ? allowed(active.i, i) : allowed(i, active.i));
        const w = other && !masked ? (active.side === "q" ? q(active.i, i) : q(i, active.i)) : null;
        wSpan.textContent = masked ? "masked" : w === null ? "" : permille(w);
        b.style.setProperty("--bv-a", w === null ? "0" : String(0.45 * amount(w) / 1000));
        b.classList.toggle("bv-active", Boolean(isActive));
        b.classList.toggle("bv-target", Boolean(other) && !masked);
        b.classList.toggle("bv-masked", Boolean(masked));
        b.classList.toggle("bv-answer", Boolean(other) && mate === i);
        const pinned = state.pinned && state.pinned.side === side && state.pinned.i === i;
        b.setAttribute("aria-pressed", pinned ? "true" : "false");
      }
      readout.textContent = active ? tokenSummary(active.side, active.i)
        : `Hover over, click or focus a token (Tab, then the arrow keys) to see its ${T} weights.`;
    }

    // shown: "“sat” (query 4 of 9) attends most to “cat” 0.612, “the” 0.201 and “[CLS]” 0.101."
    // said (one short line): "“sat”, query 4: most to “cat” 0.612, then “the” 0.201."
    function tokenSummary(side, i, short) {
      const s = sentence(), tokens = s.tokens, T = tokens.length;
      const ws = tokens.map((_, k) => ({ k, w: side === "q" ? q(i, k) : q(k, i) }))
        .filter((x) => (side === "q" ? allowed(i, x.k) : allowed(x.k, i)));
      ws.sort((a, b) => amount(b.w) - amount(a.w) || a.k - b.k);
      // the largest weight, then up to two more (one when said) that reach 0.050
      const n = short ? 2 : 3;
      const top = ws.filter((x, r) => r === 0 || (r < n && amount(x.w) >= 50)).map((x) => `“${tokens[x.k]}” ${permille(x.w)}`);
      if (short)
        return `“${tokens[i]}”, ${side === "q" ? "query" : "key"} ${i + 1}: most ${side === "q" ? "to" : "from"} ` +
          top.join(", then ") + ".";
      const list = top.length > 1 ? `${top.slice(0, -1).join(", ")} and ${top[top.length - 1]}` : top[0];
      let text = side === "q"
        ? `“${tokens[i]}” (query ${i + 1} of ${T}) attends most to ${list}.`
        : `“${tokens[i]}” (key ${i + 1} of ${T}) gets most from ${list}.`;
      if (!model().causal) return text;
      if (side === "q" && i < T - 1)
        text += i + 2 === T ? ` Key ${T} comes later: masked, weight 0.` : ` Keys ${i + 2} to ${T} come later: masked, weight 0.`;
      if (side === "k" && i > 0)
        text += i === 1 ? " Query 1 comes before it: masked, weight 0." : ` Queries 1 to ${i} come before it: masked, weight 0.`;
      const mate = partner(side, i);
      if (side === "q" && mate !== null) {
        const said = s.predicted[i] === tokens[mate] ? "right" : "wrong";
        text += ` Its answer is “${tokens[mate]}” (key ${mate + 1}, outlined), weight ${permille(q(i, mate))};` +
          ` the model outputs “${s.predicted[i]}” (${said}).`;
      } else if (side === "k" && mate !== null) {
        text += ` It holds the answer of query ${mate + 1} (outlined), which gives it ${permille(q(mate, i))}.`;
      }
      return text;
    }

    function announce(text) {
      live.textContent = text;
    }

    // ---- changes
    function choose(l, h, speak) {
      const changed = l !== state.l || h !== state.h;
      state.l = l; state.h = h;
      drawSelection();
      drawHead();
      if (speak && changed) announce(shortHead() + ".");
    }

    headView.addEventListener("keydown", (e) => {
      const T = sentence().tokens.length;
      const c = { ...state.cursor };
      if (e.key === "ArrowUp") c.i = Math.max(0, c.i - 1);
      else if (e.key === "ArrowDown") c.i = Math.min(T - 1, c.i + 1);
      else if (e.key === "ArrowLeft") c.side = "q";
      else if (e.key === "ArrowRight") c.side = "k";
      else if (e.key === "Home") c.i = 0;
      else if (e.key === "End") c.i = T - 1;
      else if (e.key === "Escape") { state.pinned = null; show(); return; }
      else return;
      e.preventDefault();
      const b = headView.querySelector(`.bv-tok[data-side="${c.side}"][data-i="${c.i}"]`);
      if (b) b.focus();
    });

    sentenceSel.sel.addEventListener("change", () => {
      state.s = Number(sentenceSel.sel.value) - 1;
      state.pinned = null;
      drawThumbs();
      drawLabels(); // with "this sentence alone", the labels are the sentence's own
      drawSelection();
      drawHead();
      announce(`${tiny ? "Sequence" : "Sentence"} ${state.s + 1}, ${sentence().tokens.length} tokens. ${shortHead()}.`);
    });
    if (modelSel) {
      modelSel.sel.addEventListener("change", () => {
        const before = model();
        state.m = Number(modelSel.sel.value) - 1;
        const m = model();
        state.l = Math.min(state.l, m.layers - 1);
        state.h = Math.min(state.h, m.heads - 1);
        state.s = Math.min(state.s, m.sentences.length - 1);
        if (m.task !== before.task) state.pinned = null; // other tokens
        buildControls();
        buildGrid();
        drawThumbs();
        drawLabels();
        drawSelection();
        drawHead();
        announce(`${m.title}. ${shortHead()}.`);
      });
    }
    layerSel.sel.addEventListener("change", () => choose(Number(layerSel.sel.value) - 1, state.h, true));
    headSel.sel.addEventListener("change", () => choose(state.l, Number(headSel.sel.value) - 1, true));
    bySel.sel.addEventListener("change", () => {
      state.by = bySel.sel.value;
      drawLabels();
      if (state.by === "type") {
        announce("Heads labelled by type.");
      } else {
        const m = model();
        let best = null;
        for (let l = 0; l < m.layers; l++) for (let h = 0; h < m.heads; h++) {
          const v = table().scores[state.by][l][h];
          if (v !== null && (!best || v > best.v)) best = { l, h, v };
        }
        announce(`Heads labelled by ${NAMES[state.by] || state.by} score; highest: layer ${best.l + 1}, head ${best.h + 1}, ${score(best.v)}.`);
      }
    });

    if (fromSel) {
      fromSel.sel.addEventListener("change", () => {
        state.from = fromSel.sel.value;
        drawLabels();
        drawSelection();
        announce(state.from === "sentence" ? "Labels from this sentence's scores alone."
          : `Labels from the scores averaged over the ${builtIn} built-in sentences.`);
      });
    }

    // ---- saving the head on show
    // all-MiniLM-L6-v2_the-cat-sat-on-the-mat_layer2_head9.csv: the sentence's words (up to 48
    // characters, whole words), the layer and the head
    function fileName(ext) {
      let slug = sentence().text.toLowerCase().normalize("NFKD").replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "");
      if (slug.length > 48) slug = slug.slice(0, 49).replace(/-[^-]*$/, "") || slug.slice(0, 48);
      return `all-MiniLM-L6-v2_${slug || `sentence-${state.s + 1}`}_layer${state.l + 1}_head${state.h + 1}.${ext}`;
    }

    // the head's weight a_ij as a number: a reader's sentence in full (float32), a stored one as stored
    function weight(i, j) {
      const s = sentence(), T = s.tokens.length;
      return s.exact ? s.exact[((state.l * model().heads + state.h) * T + i) * T + j] : amount(q(i, j)) / 1000;
    }

    function csvCell(text) {
      return /[",\n\r]/.test(text) || /^\s|\s$/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
    }

    // rows: query tokens; columns: key tokens; a reader's sentence to 6 decimals, a stored one to 3
    function headCsv() {
      const s = sentence(), T = s.tokens.length;
      // (6 decimals, or every digit of a weight they would write as 0 or 1: 1.2e-8 is not 0.000000)
      const exact = (v) => { const t = v.toFixed(6); return (v > 0 && Number(t) === 0) || (v < 1 && Number(t) === 1) ? String(v) : t; };
      const lines = [["query \\ key", ...s.tokens].map(csvCell).join(",")];
      for (let i = 0; i < T; i++)
        lines.push([csvCell(s.tokens[i]), ...s.tokens.map((_, j) => (s.exact ? exact(weight(i, j)) : permille(q(i, j))))].join(","));
      return lines.join("\r\n") + "\r\n";
    }

    // The head as a figure for slides: two columns of tokens joined by lines as opaque as their
    // weights (as drawn here), a title naming the model, the layer, the head and its label, and
    // the sentence; on white, in the site's line colour, the text as text.
    function headSvg() {
      const s = sentence(), T = s.tokens.length, row = 22, top = 78, width = 640, qx = 220, kx = 420;
      const height = top + row * T + 16;
      const esc = (t) => String(t).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
      const lab = label(state.l, state.h);
      const text = s.text.length > 80 ? `${s.text.slice(0, 79)}…` : s.text;
      const parts = [`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" ` +
        `viewBox="0 0 ${width} ${height}" font-family="DejaVu Sans, Arial, Helvetica, sans-serif" font-size="14">`,
      `<rect width="100%" height="100%" fill="#ffffff"/>`,
      `<text x="${width / 2}" y="24" text-anchor="middle" font-size="16" fill="#222222">all-MiniLM-L6-v2, layer ${state.l + 1}, ` +
        `head ${state.h + 1}: ${esc(NAMES[lab.kind] || lab.kind)} ${score(lab.value)}</text>`,
      `<text x="${width / 2}" y="46" text-anchor="middle" fill="#555555">${esc(text)}</text>`,
      `<text x="${qx}" y="${top - 12}" text-anchor="end" font-style="italic" fill="#555555">query</text>`,
      `<text x="${kx}" y="${top - 12}" font-style="italic" fill="#555555">key</text>`];
      for (let i = 0; i < T; i++)
        for (let j = 0; j < T; j++) {
          const w = weight(i, j);
          if (w < 0.005) continue;
          parts.push(`<line x1="${qx + 8}" y1="${top + row * i + 11}" x2="${kx - 8}" y2="${top + row * j + 11}" ` +
            `stroke="#0072b2" stroke-linecap="round" stroke-opacity="${w.toFixed(3)}" stroke-width="${(0.6 + 2.4 * w).toFixed(2)}"/>`);
        }
      s.tokens.forEach((t, i) => {
        parts.push(`<text x="${qx}" y="${top + row * i + 16}" text-anchor="end" fill="#222222">${esc(t)}</text>`);
        parts.push(`<text x="${kx}" y="${top + row * i + 16}" fill="#222222">${esc(t)}</text>`);
      });
      parts.push("</svg>");
      return parts.join("\n");
    }

    function download(blob, name) {
      const a = el("a", { href: URL.createObjectURL(blob), download: name });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(a.href), 60_000);
    }

    async function save(kind, button) {
      button.setAttribute("aria-busy", "true");
      try {
        if (kind === "csv") download(new Blob([headCsv()], { type: "text/csv" }), fileName("csv"));
        else if (kind === "svg") download(new Blob([headSvg()], { type: "image/svg+xml" }), fileName("svg"));
        else await window.mhaSavePng(new Blob([headSvg()], { type: "image/svg+xml" }), fileName("png"), { background: "#ffffff" });
        announce(`Saved ${fileName(kind)}.`);
      } finally {
        button.removeAttribute("aria-busy");
      }
    }

    // ---- a sentence the reader typed, run by the live model (bert_live.js)
    if (!tiny) {
      let shown = false;
      ui.mhaShowSentence = (run) => { // {text, tokens, weights (L, H, T, T) float32, scores}
        const m = models[0];
        m.sentences[builtIn] = { text: run.text, tokens: run.tokens, exact: run.weights, live: true,
          w: Uint16Array.from(run.weights, code) };
        m.sentence_scores[builtIn] = run.scores;
        m.sentence_labels[builtIn] = labelsOf(run.scores, m);
        state.s = builtIn;
        state.pinned = null;
        if (!shown) { state.from = "sentence"; fromSel.sel.value = "sentence"; shown = true; }
        fill(sentenceSel.sel, sentenceOptions());
        drawThumbs();
        drawLabels();
        drawSelection();
        drawHead();
        ui.dataset.live = String(Number(ui.dataset.live || 0) + 1);
        announce(`Your sentence, ${run.tokens.length} tokens. ${shortHead()}.`);
      };
    }

    buildControls();
    buildGrid();
    drawThumbs();
    drawLabels();
    drawSelection();
    drawHead();
  }

  function ordinal(n) {
    const tail = n % 100 >= 11 && n % 100 <= 13 ? "th" : { 1: "st", 2: "nd", 3: "rd" }[n % 10] || "th";
    return `${n}${tail}`;
  }

  // exposed for the tests: decoding and formatting, the same code the viewer runs
  window.mhaBertViewer = { decode, decodeCausal, permille, code, score, percentText };
  if (window.mhaExplorers && window.mhaExplorers.register) {
    window.mhaExplorers.register("bert", init);
    window.mhaExplorers.register("tiny", init);
  }
})();
