// Real-model attention viewer (page: look inside a real model; widget "bert").
//
// Shows one head of all-MiniLM-L6-v2 on a built-in sentence as lines between a column of
// query tokens and a column of key tokens, and all 6 x 12 heads as thumbnails labelled
// with their head-type score. Nothing is computed here: the build ran mhalib's forward
// pass and put every weight on the page (figures/real_model/bert_viewer.py), each as
// q = round(1000 w), two base64url characters per weight, in the order layer, head,
// query, key. A weight is shown as q / 1000 with three decimals, exactly as stored.
// Plain DOM and SVG; no framework, no network.
(function () {
  "use strict";

  const SVG_NS = "http://www.w3.org/2000/svg";
  const VIRIDIS = ["#440154", "#472d7b", "#3b528b", "#2c728e", "#21918c", "#28ae80", "#5ec962", "#addc30", "#fde725"];
  const NAMES = {
    "previous token": "previous token", "next token": "next token", self: "self", "to [CLS]": "[CLS]",
    "to [SEP]": "[SEP]", "to punctuation": "punctuation", entropy: "spread", broad: "broad",
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

  // q per mille -> "0.123": integer arithmetic, so the text is exactly the stored rounding.
  function permille(q) {
    return `${Math.floor(q / 1000)}.${String(q % 1000).padStart(3, "0")}`;
  }

  function score(v) {
    return v === null || v === undefined ? "–" : v.toFixed(2);
  }

  // ---- the viewer -------------------------------------------------------------------
  let uid = 0;

  function init(ui, data) {
    const { el, colour } = window.mhaExplorers;
    const L = data.layers, H = data.heads;
    const sentences = data.sentences.map((s) => ({ text: s.text, tokens: s.tokens, w: decode(s.codes, data.alphabet) }));
    const state = {
      s: data.start.sentence - 1, l: data.start.layer - 1, h: data.start.head - 1,
      by: "type", // what the thumbnails' labels show: "type" or one of data.types
      cursor: { side: "q", i: 1 }, // the head view's one tab stop
      pinned: null, hover: null, focused: null,
    };
    const id = "bv-" + ++uid;

    // weight of query i on key j, per mille, in the selected head of the selected sentence
    function q(i, j) {
      const s = sentences[state.s], T = s.tokens.length;
      return s.w[((state.l * H + state.h) * T + i) * T + j];
    }

    // ---- controls
    function select(label, key, options) {
      const sel = el("select", { id: `${id}-${key}` }, options.map(([value, text]) => el("option", { value, text })));
      const wrap = el("div", { class: "mha-control" }, [el("label", { for: sel.id, text: label }), sel]);
      return { sel, wrap };
    }
    // option values count from 1, as the labels do
    const sentenceSel = select("Sentence", "sentence", sentences.map((s, k) => [String(k + 1), `${k + 1}. ${s.text}`]));
    const layerSel = select("Layer", "layer", Array.from({ length: L }, (_, k) => [String(k + 1), String(k + 1)]));
    const headSel = select("Head", "head", Array.from({ length: H }, (_, k) => [String(k + 1), String(k + 1)]));
    sentenceSel.wrap.classList.add("bv-sentence");

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

    // ---- the overview: 6 x 12 thumbnails
    const byOptions = [["type", "type (the kind of key that gets half the weight)"]].concat(
      data.types.map((t) => [t, t === "entropy" ? "spread (normalised entropy)" : `${NAMES[t]} score`]));
    const bySel = select("Label heads by", "by", byOptions);
    const grid = el("div", {
      class: "bv-grid", role: "radiogroup",
      "aria-label": `All ${L * H} heads: layers 1 to ${L} (rows) by heads 1 to ${H} (columns)`,
    });
    grid.appendChild(el("div", { class: "bv-corner", "aria-hidden": "true", text: "layer \\ head" }));
    for (let h = 0; h < H; h++) grid.appendChild(el("div", { class: "bv-colno", "aria-hidden": "true", text: String(h + 1) }));
    const thumbs = [];
    for (let l = 0; l < L; l++) {
      grid.appendChild(el("div", { class: "bv-rowno", "aria-hidden": "true", text: String(l + 1) }));
      for (let h = 0; h < H; h++) {
        const canvas = el("canvas", { "aria-hidden": "true" });
        // its name is what it shows, after "Layer 1, head 3:"
        const where = el("span", { class: "bv-sr", text: `Layer ${l + 1}, head ${h + 1}: ` });
        const name = el("span", { class: "bv-lab" });
        const value = el("span", { class: "bv-val" });
        const b = el("button", { type: "button", class: "bv-thumb", role: "radio", tabindex: "-1",
          "data-layer": String(l + 1), "data-head": String(h + 1) }, [where, canvas, name, value]);
        b.addEventListener("click", () => choose(l, h, true));
        grid.appendChild(b);
        thumbs.push({ b, canvas, name, value, l, h });
      }
    }
    grid.addEventListener("keydown", (e) => {
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
    ui.append(
      el("div", { class: "mha-controls" }, [sentenceSel.wrap, layerSel.wrap, headSel.wrap]),
      summary, headView, readout,
      el("div", { class: "mha-controls bv-overview-controls" }, [bySel.wrap]),
      el("div", { class: "bv-scroll" }, [grid]),
      live);

    // ---- what a head is labelled with
    function label(l, h) {
      if (state.by === "type") {
        const kind = data.label[l][h];
        return { kind, name: data.short[kind], value: data.label_value[l][h], strong: kind !== "broad" };
      }
      const v = data.scores[state.by][l][h];
      return { kind: state.by, name: data.short[state.by], value: v, strong: v !== null && v >= data.threshold };
    }

    function describeHead() {
      const l = state.l, h = state.h, kind = data.label[l][h];
      const avg = data.label_value[l][h];
      const key = kind === "broad" ? "entropy" : kind;
      const here = data.sentence_scores[state.s][key][l][h];
      const n = sentences.length;
      if (kind === "broad")
        return `Layer ${l + 1}, head ${h + 1} is broad: no kind of key gets half of its weight; ` +
          `its spread (normalised entropy) is ${score(avg)} on average over ${n} sentences, ${score(here)} on this one.`;
      return `Layer ${l + 1}, head ${h + 1} is a ${HEAD_NAMES[kind]} head: ${score(avg)} of its weight goes ` +
        `${kind === "self" ? "to the token itself" : "there"} on average over ${n} sentences, ${score(here)} on this one.`;
    }

    function shortHead() {
      const lab = label(state.l, state.h);
      return `Layer ${state.l + 1}, head ${state.h + 1}: ${NAMES[lab.kind]} ${score(lab.value)}`;
    }

    // ---- drawing
    function drawThumbs() {
      const s = sentences[state.s], T = s.tokens.length;
      for (const t of thumbs) {
        t.canvas.width = T; t.canvas.height = T;
        const ctx = t.canvas.getContext("2d");
        const img = ctx.createImageData(T, T);
        for (let i = 0; i < T; i++) {
          for (let j = 0; j < T; j++) {
            const rgb = colour(VIRIDIS, s.w[((t.l * H + t.h) * T + i) * T + j] / 1000);
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
        t.b.title = `Layer ${t.l + 1}, head ${t.h + 1}: ${NAMES[lab.kind]} ${score(lab.value)}`;
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
      summary.textContent = describeHead();
      ui.dataset.sentence = String(state.s + 1);
      ui.dataset.layer = String(state.l + 1);
      ui.dataset.head = String(state.h + 1);
    }

    function tokenButton(side, i, text) {
      // its name is what it shows (the token, and a weight when one is shown), after "query 3:"
      const w = el("span", { class: "bv-w" });
      const t = el("span", { class: "bv-t", text });
      const where = el("span", { class: "bv-sr", text: `${side === "q" ? "query" : "key"} ${i + 1}: ` });
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
      const s = sentences[state.s], T = s.tokens.length;
      if (state.cursor.i >= T) state.cursor.i = T - 1;
      if (state.pinned && state.pinned.i >= T) state.pinned = null;
      qCol.replaceChildren(...s.tokens.map((t, i) => tokenButton("q", i, t)));
      kCol.replaceChildren(...s.tokens.map((t, i) => tokenButton("k", i, t)));
      headView.style.setProperty("--bv-n", String(T));
      headView.setAttribute("aria-label",
        `Layer ${state.l + 1}, head ${state.h + 1}: ${T} query tokens and ${T} key tokens; ` +
        "use the arrow keys to move between tokens, Enter to keep one selected, Escape to let it go");
      svg.setAttribute("viewBox", `0 0 100 ${T}`);
      const lines = [];
      for (let i = 0; i < T; i++) {
        for (let j = 0; j < T; j++) {
          if (q(i, j) === 0) continue;
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

    // what the head view shows: hover first, then keyboard focus, then the pinned token
    function show() {
      const active = state.hover || state.focused || state.pinned;
      const T = sentences[state.s].tokens.length;
      for (const line of svg.children) {
        const i = Number(line.dataset.i), j = Number(line.dataset.j), w = q(i, j) / 1000;
        const on = !active || (active.side === "q" ? i === active.i : j === active.i);
        // opacity grows with the weight; a selected token's faint lines stay just visible
        line.style.strokeOpacity = on ? String(active ? 0.12 + 0.88 * w : w) : "0";
        line.style.strokeWidth = on && active ? String(1 + 3 * w) : String(0.5 + 2 * w);
      }
      for (const b of headView.querySelectorAll(".bv-tok")) {
        const side = b.dataset.side, i = Number(b.dataset.i);
        const wSpan = b.querySelector(".bv-w");
        const isActive = active && active.side === side && active.i === i;
        const other = active && active.side !== side;
        const w = other ? (active.side === "q" ? q(active.i, i) : q(i, active.i)) : null;
        wSpan.textContent = w === null ? "" : permille(w);
        b.style.setProperty("--bv-a", w === null ? "0" : String(0.45 * w / 1000));
        b.classList.toggle("bv-active", Boolean(isActive));
        b.classList.toggle("bv-target", Boolean(other));
        const pinned = state.pinned && state.pinned.side === side && state.pinned.i === i;
        b.setAttribute("aria-pressed", pinned ? "true" : "false");
      }
      readout.textContent = active ? tokenSummary(active.side, active.i)
        : `Hover over, click or focus a token (Tab, then the arrow keys) to see its ${T} weights.`;
    }

    // shown: "“sat” (query 4 of 9) attends most to “cat” 0.612, “the” 0.201 and “[CLS]” 0.101."
    // said (one short line): "“sat”, query 4: most to “cat” 0.612, then “the” 0.201."
    function tokenSummary(side, i, short) {
      const tokens = sentences[state.s].tokens, T = tokens.length;
      const ws = tokens.map((_, k) => ({ k, w: side === "q" ? q(i, k) : q(k, i) }));
      ws.sort((a, b) => b.w - a.w || a.k - b.k);
      // the largest weight, then up to two more (one when said) that reach 0.050
      const n = short ? 2 : 3;
      const top = ws.filter((x, r) => r === 0 || (r < n && x.w >= 50)).map((x) => `“${tokens[x.k]}” ${permille(x.w)}`);
      if (short)
        return `“${tokens[i]}”, ${side === "q" ? "query" : "key"} ${i + 1}: most ${side === "q" ? "to" : "from"} ` +
          top.join(", then ") + ".";
      const list = top.length > 1 ? `${top.slice(0, -1).join(", ")} and ${top[top.length - 1]}` : top[0];
      return side === "q"
        ? `“${tokens[i]}” (query ${i + 1} of ${T}) attends most to ${list}.`
        : `“${tokens[i]}” (key ${i + 1} of ${T}) gets most from ${list}.`;
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
      const T = sentences[state.s].tokens.length;
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
      drawSelection();
      drawHead();
      const s = sentences[state.s];
      announce(`Sentence ${state.s + 1}, ${s.tokens.length} tokens. ${shortHead()}.`);
    });
    layerSel.sel.addEventListener("change", () => choose(Number(layerSel.sel.value) - 1, state.h, true));
    headSel.sel.addEventListener("change", () => choose(state.l, Number(headSel.sel.value) - 1, true));
    bySel.sel.addEventListener("change", () => {
      state.by = bySel.sel.value;
      drawLabels();
      if (state.by === "type") {
        announce("Heads labelled by type.");
      } else {
        let best = null;
        for (let l = 0; l < L; l++) for (let h = 0; h < H; h++) {
          const v = data.scores[state.by][l][h];
          if (v !== null && (!best || v > best.v)) best = { l, h, v };
        }
        announce(`Heads labelled by ${NAMES[state.by]} score; highest: layer ${best.l + 1}, head ${best.h + 1}, ${score(best.v)}.`);
      }
    });

    drawThumbs();
    drawLabels();
    drawSelection();
    drawHead();
  }

  // exposed for the tests: decoding and formatting, the same code the viewer runs
  window.mhaBertViewer = { decode, permille };
  if (window.mhaExplorers && window.mhaExplorers.register) window.mhaExplorers.register("bert", init);
})();
