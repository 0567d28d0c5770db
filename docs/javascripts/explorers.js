// Interactive explorers: heads in action, RoPE and sinusoidal PE (pages: heads, rope, sinusoidal).
//
// No framework and no network. The build inlines what the page cannot compute itself
// (embeddings, preset matrices) as JSON next to each explorer; everything else is
// computed here with the same formulas as mhalib. The numeric functions are exposed as
// window.mhaExplorers so that the browser tests can compare them with mhalib.
//
// Every explorer follows the same reading rules:
// - each control is a native element with a label, and shows a focus ring (extra.css);
// - a heatmap cell shows its query, key and weight (or position, dimension and value) in a
//   tip or a readout line when the pointer is over it or when it has keyboard focus; the arrow keys
//   move between cells (one tab stop per map: a "roving" tabindex);
// - one visually hidden live region per explorer announces a one-line summary after each
//   change, so a screen reader is not read three tables per slider step.
(function () {
  "use strict";

  // ---- numerics (mirrors mhalib) -------------------------------------------------
  function softmaxRow(row) {
    const m = Math.max(...row);
    const e = row.map((x) => Math.exp(x - m)); // subtract the row maximum: never overflows
    const s = e.reduce((a, b) => a + b, 0);
    return e.map((x) => x / s);
  }

  function matmul(A, B) {
    return A.map((row) => B[0].map((_, j) => row.reduce((acc, a, k) => acc + a * B[k][j], 0)));
  }

  // single = softmax(Q K^T / tau) over dims 0-3; head1 over dims 0-1; head2 over dims 2-3.
  function headsInAction(data, preset, tau) {
    const W = data.presets[preset];
    const Q = matmul(data.X, W.W_Q);
    const K = matmul(data.X, W.W_K);
    const maps = {};
    for (const [name, lo, hi] of [["single", 0, 4], ["head1", 0, 2], ["head2", 2, 4]]) {
      maps[name] = Q.map((q) =>
        softmaxRow(K.map((k) => {
          let s = 0;
          for (let c = lo; c < hi; c++) s += q[c] * k[c];
          return s / tau;
        }))
      );
    }
    return maps;
  }

  function rotate(v, angle) {
    const c = Math.cos(angle), s = Math.sin(angle);
    return [c * v[0] - s * v[1], s * v[0] + c * v[1]];
  }

  // (R(m) q) . (R(n) k) in one plane with angular frequency theta.
  function ropeScore(q, k, m, n, theta) {
    const rq = rotate(q, m * theta), rk = rotate(k, n * theta);
    return rq[0] * rk[0] + rq[1] * rk[1];
  }

  // PE[p][2i] = sin(p w_i), PE[p][2i+1] = cos(p w_i), w_i = base^(-2i/d).
  function peTable(nPositions, dModel, base) {
    const rows = [];
    for (let p = 0; p < nPositions; p++) {
      const row = new Array(dModel);
      for (let i = 0; i < dModel / 2; i++) {
        const w = Math.pow(base, (-2 * i) / dModel);
        row[2 * i] = Math.sin(p * w);
        row[2 * i + 1] = Math.cos(p * w);
      }
      rows.push(row);
    }
    return rows;
  }

  function wavelengths(dModel, base) {
    const out = [];
    for (let i = 0; i < dModel / 2; i++) out.push(2 * Math.PI * Math.pow(base, (2 * i) / dModel));
    return out;
  }

  // ---- colour (the same maps as the static figures) -----------------------------------
  // Seventeen evenly spaced stops (0, 1/16, ..., 1) of matplotlib's maps, interpolated linearly:
  // within 6 (viridis) and 8 (PuOr_r) units of 255 of matplotlib's own colours.
  // VIRIDIS: weights. PUOR: matplotlib's PuOr_r, the static PE figure's map, -1 purple to +1 orange-brown.
  const VIRIDIS = ["#440154", "#48186a", "#472d7b", "#424086", "#3b528b", "#33638d", "#2c728e", "#26828e", "#21918c",
    "#1fa088", "#28ae80", "#3fbc73", "#5ec962", "#84d44b", "#addc30", "#d8e219", "#fde725"];
  const PUOR = ["#2d004b", "#451871", "#5f3a91", "#7b6aa8", "#9990bf", "#b7b1d5", "#cfcfe5", "#e4e5f0", "#f7f7f6",
    "#fce8cd", "#fed59f", "#fdbc6b", "#ee9b39", "#d97b12", "#bd6109", "#9e4c07", "#7f3b08"];

  function hexToRgb(h) {
    return [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16));
  }

  function colour(stops, t) {
    const x = Math.min(1, Math.max(0, t)) * (stops.length - 1);
    const i = Math.min(stops.length - 2, Math.floor(x));
    const a = hexToRgb(stops[i]), b = hexToRgb(stops[i + 1]);
    return a.map((v, j) => Math.round(v + (b[j] - v) * (x - i)));
  }

  // A CSS gradient through the same stops, for colour bars ("to right", "to top").
  function gradient(stops, direction) {
    return `linear-gradient(${direction}, ${stops.join(", ")})`;
  }

  function textOn(rgb) {
    const lum = (0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2]) / 255;
    return lum > 0.5 ? "#111111" : "#ffffff";
  }

  // ---- number formatting ------------------------------------------------------------
  // v to `digits` decimals as figures/_kit/style.py writes numbers: a zero unsigned (never
  // "-0.00"), and a number that is not zero never as zero: to `sig` significant digits then,
  // as Python's f"{v:.2g}" (style.fixed) or f"{v:.1g}" (style.cell_text) writes it.
  const fixed = (v, digits, sig = 2) => {
    if (Number.isNaN(v)) return "nan";
    if (!Number.isFinite(v)) return v > 0 ? "inf" : "-inf";
    const sign = v < 0 ? "-" : "";
    let body = absFixed(Math.abs(v), digits);
    if (/[1-9]/.test(body)) {
      // style.fixed (sig 2) keeps the decimals that tell a number strictly between -1 and 1 from
      // 1 or -1 (0.9998 at two is "0.9998"); a cell (sig 1, cellText) says "≈" after three more
      while (sig === 2 && v > -1 && v < 1 && Number(body) === 1) body = absFixed(Math.abs(v), ++digits);
      return sign + body;
    }
    if (v === 0) return body;
    const ex = v.toExponential(sig - 1);  // rounded first: its exponent decides the form, as in Python
    const exp = Number(ex.split("e")[1]);
    // (the fixed form through absFixed: 0.125 to two digits is "0.12", a tie to even, as in Python;
    // below 1e-4 no float is a tie at one or two significant digits)
    const out = exp < -4 || exp >= sig ? ex.replace(/\.?0+e/, "e")
      : (v < 0 ? "-" : "") + absFixed(Math.abs(v), Math.max(0, sig - 1 - exp))
        .replace(/(\.\d*?)0+$/, "$1").replace(/\.$/, "");
    return out.replace(/e([+-])(\d)$/, "e$10$2");  // Python's two-digit exponent: 4.7e-07
  };

  // a grid cell as style.cell_text writes one: fixed(v, digits, 1) (one significant digit where
  // the decimals read zero), and a value strictly between -1 and 1 that would read as 1 or -1
  // with up to three more decimals, then "≈" (a weight of 0.99995 is not all of it)
  const cellText = (v, digits) => {
    const text = fixed(v, digits, 1);
    if (!(v > -1 && v < 1) || Math.abs(Number(text)) !== 1) return text;
    for (let more = 1; more <= 3; more++) {
      const longer = fixed(v, digits + more, 1);
      if (Math.abs(Number(longer)) !== 1) return longer;
    }
    return `≈${text}`;
  };

  // a (>= 0) to `digits` decimals as Python rounds it: an exact tie to the even digit (toFixed
  // rounds it up: 0.125 to two places is "0.12" in Python, "0.13" in toFixed), and every digit
  // of a number from 1e21 on (toFixed writes "1e+21" there)
  function absFixed(a, digits) {
    if (a >= 1e21) return BigInt(a).toString() + (digits ? "." + "0".repeat(digits) : "");
    const text = a.toFixed(digits);
    const full = a.toFixed(Math.min(100, digits + 25));  // enough digits to tell a tie from a near one
    const cut = full.indexOf(".") + (digits ? 1 + digits : 0);
    if (!/^\.?50*$/.test(full.slice(cut))) return text;
    const down = full.slice(0, cut);
    return Number(down[down.length - 1]) % 2 === 0 ? down : text;
  };

  // v rounded toward `dir` ("up" or "down") at `digits` decimals, a bound, with more decimals
  // where that would read a number that is not 0 as 0, or one strictly between -1 and 1 as 1
  // (the heads explorer wrote "colour 0 to 0.37" for a top of 0.3722, and the wavelengths' range
  // "to 13536.71" for 13536.712: pass fifty-three). Exact: the bound is taken from the float's own
  // binary value, in integers (style.bounded bounds its shortest decimal, so the float nearest
  // 6.28 is "6.29" up here and "6.28" there: both on the right side). Not a number: as it is.
  function bounded(v, digits, dir) {
    if (!Number.isFinite(v)) return String(v);
    for (let d = digits; d <= 17; d++) {
      const text = boundText(v, d, dir), x = Number(text);
      if ((v !== 0 && x === 0) || (v > -1 && v < 1 && Math.abs(x) === 1)) continue;
      return text;
    }
    // below 1e-17: two significant digits, moved one unit outward (toExponential rounds to
    // nearest, within half a unit; the shortest decimal could lie on the wrong side: 1.1e-18
    // is the float 1.0999...e-18, pass fifty-six)
    const [mant, exp] = Math.abs(v).toExponential(1).split("e");
    const away = (dir === "up") === (v > 0) ? 1 : -1;
    return `${v < 0 ? "-" : ""}${(Number(mant) + away * 0.1).toFixed(1)}e${exp}`;
  }
  function boundText(v, d, dir) {
    const neg = v < 0, a = Math.abs(v);
    if (a >= 1e21) return (neg ? "-" : "") + BigInt(a).toString() + (d ? "." + "0".repeat(d) : "");
    const full = a.toFixed(100), dot = full.indexOf(".");
    const away = /[1-9]/.test(full.slice(dot + 1 + d)) && ((dir === "up") !== neg);  // (up, for a negative: toward 0)
    const n = BigInt(full.slice(0, dot) + full.slice(dot + 1, dot + 1 + d)) + (away ? 1n : 0n);
    const s = n.toString().padStart(d + 1, "0");
    return (neg && n !== 0n ? "-" : "") + (d ? `${s.slice(0, -d)}.${s.slice(-d)}` : s);
  }

  // "Nice" tick positions 0, step, 2 step, ... for integer indices 0..n-1, at most maxTicks of them.
  function integerTicks(n, maxTicks) {
    const steps = [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000];
    const step = steps.find((s) => Math.floor((n - 1) / s) + 1 <= Math.max(2, maxTicks)) || 1000;
    const out = [];
    for (let v = 0; v <= n - 1; v += step) out.push(v);
    return out;
  }

  // ---- small DOM helpers ----------------------------------------------------------
  let uid = 0;
  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "text") node.textContent = v;
      else node.setAttribute(k, v);
    }
    for (const c of children || []) node.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    return node;
  }

  const SVG = "http://www.w3.org/2000/svg";
  function svgEl(tag, attrs) {
    const node = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
    return node;
  }

  // label may be text or an array of nodes (e.g. d<sub>model</sub>).
  function slider(label, min, max, step, value, format) {
    const id = "mha-x-" + ++uid;
    const input = el("input", { type: "range", id, min, max, step, value });
    const out = el("output", { for: id, "aria-hidden": "true" });
    const show = () => {
      out.textContent = format(input.valueAsNumber);
      input.setAttribute("aria-valuetext", format(input.valueAsNumber));
    };
    input.addEventListener("input", show);
    show();
    const lab = el("label", { for: id }, Array.isArray(label) ? label : [label]);
    const wrap = el("div", { class: "mha-control" }, [lab, input, out]);
    return { wrap, input, out, show };
  }

  function choice(label, options) {
    const id = "mha-x-" + ++uid;
    const select = el("select", { id }, options.map(([value, text]) => el("option", { value, text })));
    return { wrap: el("div", { class: "mha-control" }, [el("label", { for: id, text: label }), select]), select };
  }

  // One polite live region per explorer. say() replaces its text after a short pause, so a
  // slider dragged across twenty steps is announced once, where it stops.
  function liveRegion() {
    const node = el("p", { class: "mha-sr-only", "aria-live": "polite", "aria-atomic": "true" });
    let timer = null;
    return {
      node,
      say(text) {
        clearTimeout(timer);
        timer = setTimeout(() => { node.textContent = text; }, 250);
      },
    };
  }

  // A heatmap as an ARIA grid: a real table (headers for screen readers), one cell in the tab
  // order (roving tabindex), arrow keys / Home / End move between cells. show(i, j) is called
  // when the pointer enters a cell or a cell gets focus; leave() when the pointer leaves the map.
  function heatGrid(labels, title, show, leave) {
    const corner = el("th", { scope: "col", class: "mha-corner" }, [
      el("span", { class: "mha-sr-only", text: "query \\ key" }),
      el("span", { "aria-hidden": "true", text: "q \\ k" })]);
    const head = el("tr", {}, [corner].concat(labels.map((t) => el("th", { scope: "col", text: t }))));
    const cells = labels.map(() => labels.map(() => null));
    const rows = labels.map((tok, i) => el("tr", {}, [el("th", { scope: "row", text: tok })].concat(labels.map((_, j) => {
      const td = el("td", { tabindex: i === 0 && j === 0 ? "0" : "-1", "data-row": String(i), "data-col": String(j) });
      cells[i][j] = td;
      return td;
    }))));
    const titleNode = el("span", { class: "mha-cap-title", text: title });
    const scaleNode = el("span", { class: "mha-cap-scale" });
    const table = el("table", { class: "mha-heat", role: "grid" }, [
      el("caption", {}, [titleNode, scaleNode]), el("thead", {}, [head]), el("tbody", {}, rows)]);
    let cur = [0, 0];

    function move(i, j) {
      cells[cur[0]][cur[1]].tabIndex = -1;
      cur = [i, j];
      cells[i][j].tabIndex = 0;
      cells[i][j].focus();
    }
    const at = (target) => {
      const td = target.closest && target.closest("td");
      return td && table.contains(td) ? [Number(td.dataset.row), Number(td.dataset.col)] : null;
    };
    table.addEventListener("keydown", (e) => {
      const p = at(e.target);
      if (!p) return;
      const n = labels.length - 1;
      const [i, j] = p;
      const to = {
        ArrowLeft: [i, Math.max(0, j - 1)], ArrowRight: [i, Math.min(n, j + 1)],
        ArrowUp: [Math.max(0, i - 1), j], ArrowDown: [Math.min(n, i + 1), j],
        Home: e.ctrlKey ? [0, 0] : [i, 0], End: e.ctrlKey ? [n, n] : [i, n],
      }[e.key];
      if (!to) return;
      e.preventDefault();
      move(to[0], to[1]);
    });
    table.addEventListener("focusin", (e) => {
      const p = at(e.target);
      if (!p) return;
      if (p[0] !== cur[0] || p[1] !== cur[1]) { // focused by a click: it becomes the tab stop
        cells[cur[0]][cur[1]].tabIndex = -1;
        cur = p;
        cells[p[0]][p[1]].tabIndex = 0;
      }
      show(p[0], p[1]);
    });
    table.addEventListener("mouseover", (e) => { const p = at(e.target); if (p) show(p[0], p[1]); });
    table.addEventListener("mouseleave", leave);
    table.addEventListener("focusout", (e) => { if (!table.contains(e.relatedTarget)) leave(); });

    function update(matrix, vmax, scaleText) {
      matrix.forEach((row, i) => row.forEach((v, j) => {
        const rgb = colour(VIRIDIS, v / vmax);
        const td = cells[i][j];
        td.style.background = `rgb(${rgb.join(",")})`;
        td.style.color = textOn(rgb);
        td.dataset.value = String(v);
        td.textContent = cellText(v, 2);  // as the figures' cells
      }));
      scaleNode.textContent = scaleText || "";
    }
    return { table, update, cells, focused: () => table.contains(document.activeElement) };
  }

  // A horizontal colour bar with tick labels: ticks is a list of [fraction 0..1, label].
  function colourBar(stops, label) {
    const bar = el("div", { class: "mha-cbar-h", "aria-hidden": "true" });
    bar.style.background = gradient(stops, "to right");
    const ticks = el("div", { class: "mha-cbar-h-ticks", "aria-hidden": "true" });
    const title = el("span", { class: "mha-cbar-title", text: label });
    const wrap = el("div", { class: "mha-legend-bar" }, [title, el("div", { class: "mha-cbar-h-box" }, [bar, ticks])]);
    return {
      wrap,
      set(tickList, text) {
        ticks.replaceChildren(...tickList.map(([f, t]) => {
          const s = el("span", { class: "mha-tick", text: t });
          s.style.left = `${f * 100}%`;
          return s;
        }));
        title.textContent = text || label;
      },
    };
  }

  // ---- explorers --------------------------------------------------------------------
  const MAPS = [["single", "single head", "dims 0–3"], ["head1", "head 1", "dims 0–1"], ["head2", "head 2", "dims 2–3"]];

  function initHeads(ui, data) {
    const preset = choice("Preset", Object.keys(data.presets).map((p) => [p, p]));
    let tauValue = data.tau; // exactly sqrt(2) until the reader moves the slider
    // τ as the maps use it: the slider holds its step's 1.41 while the maps use √2 itself, so the
    // readout and the summary then say "≈ 1.41", as the figure's title does
    const tauText = () => (Number(fixed(tauValue, 2)) === tauValue ? "" : "≈ ") + fixed(tauValue, 2);
    const tau = slider("Temperature τ", 0.1, 5, 0.01, data.tau, tauText);
    const reset = el("button", { type: "button", class: "mha-button", text: "Reset τ to √2" });
    const scale = choice("Colour scale", [["fixed", "fixed, 0 to 1"], ["each", "each map to its largest"]]);
    let current = null; // the three maps now shown
    let shown = null; // [map key, i, j] under the pointer or focused, or null
    const live = liveRegion();
    const tipId = "mha-x-" + ++uid;
    // The value under the pointer or the focused cell, in a tip over the cell; the focused cell
    // points to it with aria-describedby, so a screen reader reads it too.
    const tip = el("p", { class: "mha-tip", id: tipId, hidden: "" });
    const bar = colourBar(VIRIDIS, "attention weight");
    const grids = {};
    const maps = el("div", { class: "mha-maps" });

    function showCell(key, i, j) {
      shown = [key, i, j];
      const [, name, dims] = MAPS.find((m) => m[0] === key);
      const w = current[key][i][j];
      tip.replaceChildren(el("span", { class: "mha-tip-map", text: `${name} (${dims})` }),
        el("span", { text: `query “${data.tokens[i]}” → key “${data.tokens[j]}”` }),
        el("span", { text: `weight ${fixed(w, 4)}` }));
      Object.assign(tip.dataset, { map: key, query: data.tokens[i], key: data.tokens[j], weight: String(w) });
      tip.hidden = false;
      const td = grids[key].cells[i][j];
      const box = maps.getBoundingClientRect(), r = td.getBoundingClientRect();
      const above = r.top - box.top - tip.offsetHeight - 6;
      tip.style.top = `${above >= 0 ? above : r.bottom - box.top + 6}px`;
      const left = r.left - box.left + r.width / 2 - tip.offsetWidth / 2;
      tip.style.left = `${Math.max(0, Math.min(box.width - tip.offsetWidth, left))}px`;
    }
    function leave() {
      const still = MAPS.find(([k]) => grids[k].focused());
      if (still) {
        const td = document.activeElement;
        showCell(still[0], Number(td.dataset.row), Number(td.dataset.col));
        return;
      }
      shown = null;
      tip.hidden = true;
      ["map", "query", "key", "weight"].forEach((k) => delete tip.dataset[k]);
    }
    for (const [key, name, dims] of MAPS) {
      grids[key] = heatGrid(data.tokens, `${name} · ${dims}`, (i, j) => showCell(key, i, j), leave);
      grids[key].cells.flat().forEach((td) => td.setAttribute("aria-describedby", tipId));
      maps.appendChild(grids[key].table);
    }
    maps.appendChild(tip);

    function render() {
      current = headsInAction(data, preset.select.value, tauValue);
      const each = scale.select.value === "each";
      for (const [key] of MAPS) {
        const vmax = each ? Math.max(...current[key].flat()) : 1;
        grids[key].update(current[key], vmax, each ? `colour 0 to ${bounded(vmax, 2, "up")}` : "");  // a bound: up
      }
      bar.set(each ? [[0, "0"], [1, "its largest"]] : [0, 0.25, 0.5, 0.75, 1].map((v) => [v, String(v)]),
        each ? "attention weight, each map from 0 to its largest" : "attention weight");
      ui.dataset.tau = String(tauValue);
      if (shown) showCell(...shown);
    }
    function summary() {
      const top = MAPS.map(([key, name]) => `${name} ${fixed(Math.max(...current[key].flat()), 2)}`).join(", ");
      return `${preset.select.value}, tau ${tauText()}: largest weight ${top}`;
    }
    const changed = () => { render(); live.say(summary()); };
    preset.select.addEventListener("change", changed);
    scale.select.addEventListener("change", changed);
    tau.input.addEventListener("input", () => { tauValue = tau.input.valueAsNumber; tau.show(); changed(); });
    reset.addEventListener("click", () => {
      tauValue = data.tau;
      tau.input.value = String(data.tau); // the slider snaps to its step; tauValue keeps sqrt(2) exactly
      tau.show();
      changed();
    });
    ui.append(
      el("div", { class: "mha-controls" }, [preset.wrap, tau.wrap, reset, scale.wrap]),
      bar.wrap,
      el("p", { class: "mha-axes-note", text: "Rows: the query; columns: the key it attends to; each row sums to 1. " +
        "Point at a cell, or Tab to a map and use the arrow keys, to read its weight." }),
      maps, live.node);
    render();
  }

  function initRope(ui, data) {
    const theta = slider("ω, radians per position", 0, 3.14, 0.01, data.theta, (v) => v.toFixed(2));
    const m = slider("query position m", 0, 15, 1, 1, (v) => String(v));
    const n = slider("key position n", 0, 15, 1, 3, (v) => String(v));
    const live = liveRegion();
    const svg = svgEl("svg", { viewBox: "-1.6 -1.6 3.2 3.2", class: "mha-rope-svg", role: "img" });
    const defs = svgEl("defs");
    const mid = ++uid; // arrowhead ids unique on the page
    for (const who of ["q", "k"]) {
      const marker = svgEl("marker", { id: `mha-rope-head-${who}-${mid}`, viewBox: "0 0 10 10", refX: 8, refY: 5,
        markerWidth: 4, markerHeight: 4, orient: "auto-start-reverse", class: `mha-rope-${who}-head` });
      marker.appendChild(svgEl("path", { d: "M 0 0 L 10 5 L 0 10 z" }));
      defs.appendChild(marker);
    }
    const markerId = (who) => `url(#mha-rope-head-${who}-${mid})`;
    const readout = el("p", { class: "mha-readout" });
    const same = el("div", { class: "mha-same-offset" });

    function arrow(v, who, text) {
      const g = svgEl("g", { class: `mha-rope-${who}` });
      g.append(svgEl("line", { x1: 0, y1: 0, x2: v[0], y2: -v[1], "marker-end": markerId(who) }));
      const r = Math.hypot(v[0], v[1]) || 1;
      const label = svgEl("text", { x: v[0] + 0.28 * v[0] / r, y: -v[1] - 0.28 * v[1] / r, "text-anchor": "middle",
        "dominant-baseline": "central" });
      label.textContent = text;
      g.append(label);
      return g;
    }
    function render() {
      const th = theta.input.valueAsNumber, mm = m.input.valueAsNumber, nn = n.input.valueAsNumber;
      const off = nn - mm;
      const rq = rotate(data.q, mm * th), rk = rotate(data.k, nn * th);
      svg.replaceChildren(defs,
        svgEl("circle", { r: Math.hypot(...data.q), class: "mha-rope-circle" }),
        svgEl("line", { x1: -1.5, y1: 0, x2: 1.5, y2: 0, class: "mha-rope-axis" }),
        svgEl("line", { x1: 0, y1: -1.5, x2: 0, y2: 1.5, class: "mha-rope-axis" }),
        arrow(rq, "q", "q"), arrow(rk, "k", "k"));
      // "≈": every number here is rounded, and a value after "=" is exact (pass forty-two)
      svg.setAttribute("aria-label", `Rotated query R(${mm})q ≈ (${fixed(rq[0], 2)}, ${fixed(rq[1], 2)}) and key R(${nn})k ≈ (${fixed(rk[0], 2)}, ${fixed(rk[1], 2)})`);
      const score = ropeScore(data.q, data.k, mm, nn, th);
      const shortcut = ropeScore(data.q, data.k, 0, off, th);
      readout.replaceChildren(el("span", { text: `offset n − m = ${off};` }), " ",
        el("span", { text: `score (R(m)q)·(R(n)k) ≈ ${fixed(score, 4)};` }), " ",
        el("span", { text: `qᵀR(n − m)k ≈ ${fixed(shortcut, 4)}` }));
      readout.dataset.score = String(score);
      // The same offset elsewhere: both positions stay >= 0 whatever the sign of the offset.
      const rows = [0, 4, 8, 12].map((s) => {
        const m2 = s + Math.max(0, -off), n2 = m2 + off;
        const here = m2 === mm && n2 === nn;
        return el("tr", here ? { class: "mha-current" } : {}, [
          el("td", { text: String(m2) }), el("td", { text: String(n2) }),
          el("td", { text: fixed(ropeScore(data.q, data.k, m2, n2, th), 4) })]);
      });
      same.replaceChildren(el("table", {}, [
        el("caption", { text: `Offset n − m = ${off} at other positions: the same score` }),
        el("thead", {}, [el("tr", {}, [["m", "query position m"], ["n", "key position n"], ["score", "score"]].map(
          ([h, full]) => el("th", { scope: "col", "aria-label": full, text: h })))]),
        el("tbody", {}, rows)]));
      return `m ${mm}, n ${nn}, offset ${off}: score ${fixed(score, 4)}`;
    }
    [theta, m, n].forEach((s) => s.input.addEventListener("input", () => live.say(render())));
    const legend = el("p", { class: "mha-legend" }, [
      el("span", { class: "mha-swatch mha-swatch-q", "aria-hidden": "true" }), "the rotated query R(m)q  ",
      el("span", { class: "mha-swatch mha-swatch-k", "aria-hidden": "true" }), "the rotated key R(n)k"]);
    ui.append(el("div", { class: "mha-controls" }, [theta.wrap, m.wrap, n.wrap]),
      el("div", { class: "mha-rope-row" }, [svg, el("div", {}, [legend, readout, same])]), live.node);
    render();
  }

  function initPe(ui, data) {
    const dLabel = ["d", el("sub", { text: "model" })];
    const d = slider(dLabel, 2, 128, 2, data.d_model, (v) => String(v));
    const n = slider("positions", 2, 128, 1, data.n_positions, (v) => String(v));
    const live = liveRegion();
    const canvas = el("canvas", { class: "mha-pe-canvas", role: "img" });
    const cursor = el("div", { class: "mha-pe-cursor", hidden: "" });
    const plot = el("div", { class: "mha-pe-plot", tabindex: "0", role: "application", "aria-roledescription": "heatmap" },
      [canvas, cursor]);
    const yticks = el("div", { class: "mha-ticks-y", "aria-hidden": "true" });
    const xticks = el("div", { class: "mha-ticks-x", "aria-hidden": "true" });
    const cbar = el("div", { class: "mha-cbar-v", "aria-hidden": "true" });
    cbar.style.background = gradient(PUOR, "to top");
    const cticks = el("div", { class: "mha-ticks-c", "aria-hidden": "true" });
    const title = el("p", { class: "mha-pe-title" });
    const layout = el("div", { class: "mha-pe-layout" }, [
      el("div", { class: "mha-axis-label mha-axis-y", "aria-hidden": "true", text: "position" }),
      yticks, plot, cbar, cticks,
      el("div", { class: "mha-axis-label mha-axis-c", "aria-hidden": "true", text: "PE value" }),
      xticks,
      el("div", { class: "mha-axis-label mha-axis-x", "aria-hidden": "true", text: "dimension (even: sin, odd: cos)" })]);
    const readout = el("p", { class: "mha-readout" });
    const cellReadout = el("p", { class: "mha-cell-readout" });
    const hint = "Point at a cell or focus the map (Tab, then the arrow keys) to read its position, dimension and value.";
    let pe = null, D = 0, N = 0, cell = null; // cell: [position, dimension] shown, or null

    cticks.replaceChildren(...[-1, -0.5, 0, 0.5, 1].map((v) => {
      const s = el("span", { class: "mha-tick", text: fixed(v, 1).replace("-", "−") });
      s.style.top = `${(1 - (v + 1) / 2) * 100}%`;
      return s;
    }));

    function ticks(box, count, maxTicks, prop) {
      box.replaceChildren(...integerTicks(count, maxTicks).map((v) => {
        const s = el("span", { class: "mha-tick", text: String(v) });
        s.style[prop] = `${((v + 0.5) / count) * 100}%`;
        return s;
      }));
    }
    function draw() {
      const w = plot.clientWidth, h = plot.clientHeight;
      if (!w || !h) return;
      const dpr = window.devicePixelRatio || 1;
      canvas.width = Math.round(w * dpr);
      canvas.height = Math.round(h * dpr);
      const ctx = canvas.getContext("2d");
      const xs = (j) => Math.round((j * canvas.width) / D), ys = (p) => Math.round((p * canvas.height) / N);
      for (let p = 0; p < N; p++) {
        for (let j = 0; j < D; j++) {
          ctx.fillStyle = `rgb(${colour(PUOR, (pe[p][j] + 1) / 2).join(",")})`;
          ctx.fillRect(xs(j), ys(p), xs(j + 1) - xs(j), ys(p + 1) - ys(p));
        }
      }
      ticks(xticks, D, Math.floor(w / 40), "left"); // a label every 40 px at most, at "nice" steps
      ticks(yticks, N, Math.floor(h / 30), "top");
    }
    function showCell(p, j) {
      cell = [p, j];
      Object.assign(cursor.style, { left: `${(j / D) * 100}%`, top: `${(p / N) * 100}%`,
        width: `${100 / D}%`, height: `${100 / N}%` });
      cursor.hidden = false;
      const text = `position ${p}, dimension ${j} (${j % 2 ? "cos" : "sin"}, pair ${j >> 1}): PE ≈ ${fixed(pe[p][j], 4)}`;
      cellReadout.textContent = text;
      Object.assign(cellReadout.dataset, { position: String(p), dimension: String(j), value: String(pe[p][j]) });
      return text;
    }
    function leave() {
      if (document.activeElement === plot && cell) return showCell(...cell);
      cell = null;
      cursor.hidden = true;
      cellReadout.textContent = hint;
      ["position", "dimension", "value"].forEach((k) => delete cellReadout.dataset[k]);
    }
    function render() {
      D = d.input.valueAsNumber;
      N = n.input.valueAsNumber;
      pe = peTable(N, D, data.base);
      title.replaceChildren("Sinusoidal PE, d", el("sub", { text: "model" }), ` = ${D}, ${N} positions`);
      canvas.setAttribute("aria-label", `Sinusoidal encoding: ${N} positions (rows) by ${D} dimensions (columns), values from −1 (purple) to +1 (orange)`);
      plot.setAttribute("aria-label", `Heatmap of the sinusoidal encoding, ${N} positions by ${D} dimensions. Arrow keys move between cells.`);
      const lam = wavelengths(D, data.base);
      readout.textContent = `${D / 2} ${D === 2 ? "pair" : "pairs"}. Wavelengths 2π/ω: ` +
        lam.slice(0, 4).map((l, i) => `dims ${2 * i}–${2 * i + 1}: ${l.toFixed(2)}`).join(", ") +
        (lam.length > 4 ? ` … dims ${D - 2}–${D - 1}: ${lam[lam.length - 1].toFixed(2)}` : "") + " positions.";
      ui.dataset.dModel = String(D);
      ui.dataset.nPositions = String(N);
      draw();
      if (cell) showCell(Math.min(cell[0], N - 1), Math.min(cell[1], D - 1));
      const span = lam.length === 1 ? `wavelength ${lam[0].toFixed(2)}`
        : `wavelengths ${bounded(lam[0], 2, "down")} to ${bounded(lam[lam.length - 1], 2, "up")}`;  // a range: outward
      return `d model ${D}, ${N} positions: ${span}`;
    }
    [d, n].forEach((s) => s.input.addEventListener("input", () => live.say(render())));

    plot.addEventListener("mousemove", (e) => {
      const r = plot.getBoundingClientRect();
      const j = Math.min(D - 1, Math.max(0, Math.floor(((e.clientX - r.left) / r.width) * D)));
      const p = Math.min(N - 1, Math.max(0, Math.floor(((e.clientY - r.top) / r.height) * N)));
      showCell(p, j);
    });
    plot.addEventListener("mouseleave", () => { if (document.activeElement !== plot) leave(); });
    plot.addEventListener("focus", () => { live.say(showCell(...(cell || [0, 0]))); });
    plot.addEventListener("blur", leave);
    plot.addEventListener("keydown", (e) => {
      const [p, j] = cell || [0, 0];
      const page = Math.max(1, Math.round(N / 8));
      const to = {
        ArrowLeft: [p, j - 1], ArrowRight: [p, j + 1], ArrowUp: [p - 1, j], ArrowDown: [p + 1, j],
        Home: [p, 0], End: [p, D - 1], PageUp: [p - page, j], PageDown: [p + page, j],
      }[e.key];
      if (!to) return;
      e.preventDefault();
      live.say(showCell(Math.min(N - 1, Math.max(0, to[0])), Math.min(D - 1, Math.max(0, to[1]))));
    });
    if (typeof ResizeObserver !== "undefined") new ResizeObserver(() => { if (pe) draw(); }).observe(plot);

    ui.append(el("div", { class: "mha-controls" }, [d.wrap, n.wrap]),
      el("figure", { class: "mha-pe-figure" }, [title, layout]), cellReadout, readout, live.node);
    render();
    leave();
  }

  const INIT = { heads: initHeads, rope: initRope, pe: initPe };

  function initAll() {
    document.querySelectorAll(".mha-explorer[data-explorer]").forEach((box) => {
      const ui = box.querySelector(".mha-explorer-ui");
      if (!ui || ui.dataset.ready || ui.dataset.loading || !INIT[box.dataset.explorer]) return; // its widget may register later
      const holder = box.querySelector(".mha-explorer-data");
      if (holder.dataset.src) { // a large payload is a file of its own (hooks/site_figures.py)
        ui.dataset.loading = "1";
        fetch(holder.dataset.src)
          .then((res) => { if (!res.ok) throw new Error(`${holder.dataset.src}: HTTP ${res.status}`); return res.json(); })
          .then((data) => { delete ui.dataset.loading; start(box, ui, data); })
          .catch((err) => { delete ui.dataset.loading; throw err; }); // the static figure stays
        return;
      }
      start(box, ui, JSON.parse(holder.textContent));
    });
  }

  function start(box, ui, data) {
    ui.hidden = false; // before init: a widget that measures itself needs to be laid out
    try {
      INIT[box.dataset.explorer](ui, data);
    } catch (err) {
      ui.hidden = true; // keep the static figure rather than show half a widget
      throw err;
    }
    ui.dataset.ready = "1";
    const fallback = document.querySelector(`.mha-explorer-static[data-static-for="${box.dataset.explorer}"]`);
    if (fallback) fallback.hidden = true; // the static figure stays for readers without JavaScript
  }

  // A widget in its own file registers with window.mhaExplorers.register("name", init).
  function register(name, init) {
    INIT[name] = init;
    if (document.readyState !== "loading") initAll();
  }

  window.mhaExplorers = { softmaxRow, headsInAction, rotate, ropeScore, peTable, wavelengths, register, colour, el,
    integerTicks };
  // Built in the next frame, not at once: a widget measures itself, and measuring while the
  // page still has style changes pending (the theme's start-up, fonts arriving) would make the
  // browser restyle the whole page an extra time; just before a frame it does that once anyway.
  const initSoon = () => requestAnimationFrame(initAll);
  if (typeof document$ !== "undefined") document$.subscribe(initSoon); // Material's instant navigation
  else document.addEventListener("DOMContentLoaded", initSoon);
})();
