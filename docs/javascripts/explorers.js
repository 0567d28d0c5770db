// Interactive explorers: heads in action, RoPE and sinusoidal PE (pages: heads, rope, sinusoidal).
//
// No framework and no network. The build inlines what the page cannot compute itself
// (embeddings, preset matrices) as JSON next to each explorer; everything else is
// computed here with the same formulas as mhalib. The numeric functions are exposed as
// window.mhaExplorers so that the browser tests can compare them with mhalib.
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
  const VIRIDIS = ["#440154", "#472d7b", "#3b528b", "#2c728e", "#21918c", "#28ae80", "#5ec962", "#addc30", "#fde725"];
  const PUOR = ["#2d004b", "#5f3a91", "#9990bf", "#cfcfe5", "#f7f7f6", "#fed59f", "#ee9b39", "#bd6109", "#7f3b08"];

  function hexToRgb(h) {
    return [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16));
  }

  function colour(stops, t) {
    const x = Math.min(1, Math.max(0, t)) * (stops.length - 1);
    const i = Math.min(stops.length - 2, Math.floor(x));
    const a = hexToRgb(stops[i]), b = hexToRgb(stops[i + 1]);
    return a.map((v, j) => Math.round(v + (b[j] - v) * (x - i)));
  }

  function textOn(rgb) {
    const lum = (0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2]) / 255;
    return lum > 0.5 ? "#111111" : "#ffffff";
  }

  // ---- small DOM helpers ----------------------------------------------------------
  let uid = 0;
  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "text") node.textContent = v;
      else node.setAttribute(k, v);
    }
    for (const c of children || []) node.appendChild(c);
    return node;
  }

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
    const wrap = el("div", { class: "mha-control" }, [el("label", { for: id, text: label }), input, out]);
    return { wrap, input, out };
  }

  function heatTable(matrix, labels, caption, vmax) {
    const head = el("tr", {}, [el("th", { scope: "col", text: "query \\ key" })].concat(
      labels.map((t) => el("th", { scope: "col", text: t }))));
    const body = matrix.map((row, i) =>
      el("tr", {}, [el("th", { scope: "row", text: labels[i] })].concat(row.map((v) => {
        const rgb = colour(VIRIDIS, v / vmax);
        return el("td", {
          style: `background: rgb(${rgb.join(",")}); color: ${textOn(rgb)}`,
          "data-value": String(v),
          text: v.toFixed(2),
        });
      })))
    );
    return el("table", { class: "mha-heat" }, [el("caption", { text: caption }), el("thead", {}, [head]), el("tbody", {}, body)]);
  }

  // ---- explorers --------------------------------------------------------------------
  function initHeads(ui, data) {
    const id = "mha-x-" + ++uid;
    const select = el("select", { id }, Object.keys(data.presets).map((p) => el("option", { value: p, text: p })));
    const tau = slider("Temperature τ", 0.1, 5, 0.01, data.tau, (v) => v.toFixed(2));
    let tauValue = data.tau; // exactly sqrt(2) until the reader moves the slider
    const maps = el("div", { class: "mha-maps", "aria-live": "polite" });
    const titles = { single: "single head (dims 0–3)", head1: "head 1 (dims 0–1)", head2: "head 2 (dims 2–3)" };
    function render() {
      const m = headsInAction(data, select.value, tauValue);
      const vmax = Math.max(...["single", "head1", "head2"].flatMap((k) => m[k].flat()));
      maps.replaceChildren(...["single", "head1", "head2"].map((k) =>
        heatTable(m[k], data.tokens, `${titles[k]}, ${select.value}, τ = ${tauValue.toFixed(2)}`, vmax)));
      ui.dataset.tau = String(tauValue);
    }
    select.addEventListener("change", render);
    tau.input.addEventListener("input", () => { tauValue = tau.input.valueAsNumber; render(); });
    ui.append(el("div", { class: "mha-controls" }, [
      el("div", { class: "mha-control" }, [el("label", { for: id, text: "Preset" }), select]), tau.wrap]), maps);
    render();
  }

  function initRope(ui, data) {
    const theta = slider("ω (radians per position)", 0, 3.14, 0.01, data.theta, (v) => v.toFixed(2));
    const m = slider("query position m", 0, 15, 1, 1, (v) => String(v));
    const n = slider("key position n", 0, 15, 1, 3, (v) => String(v));
    const svgNS = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(svgNS, "svg");
    svg.setAttribute("viewBox", "-1.6 -1.6 3.2 3.2");
    svg.setAttribute("class", "mha-rope-svg");
    svg.setAttribute("role", "img");
    const readout = el("p", { class: "mha-readout", "aria-live": "polite" });
    const same = el("table", { class: "mha-same-offset" });
    function arrow(v, cls) {
      const line = document.createElementNS(svgNS, "line");
      line.setAttribute("x1", "0"); line.setAttribute("y1", "0");
      line.setAttribute("x2", String(v[0])); line.setAttribute("y2", String(-v[1]));
      line.setAttribute("class", cls);
      return line;
    }
    function render() {
      const th = theta.input.valueAsNumber, mm = m.input.valueAsNumber, nn = n.input.valueAsNumber;
      const rq = rotate(data.q, mm * th), rk = rotate(data.k, nn * th);
      const circle = document.createElementNS(svgNS, "circle");
      circle.setAttribute("r", "1.2"); circle.setAttribute("class", "mha-rope-circle");
      svg.replaceChildren(circle, arrow(rq, "mha-rope-q"), arrow(rk, "mha-rope-k"));
      svg.setAttribute("aria-label", `Rotated query R(${mm})q = (${rq[0].toFixed(2)}, ${rq[1].toFixed(2)}) and key R(${nn})k = (${rk[0].toFixed(2)}, ${rk[1].toFixed(2)})`);
      const score = ropeScore(data.q, data.k, mm, nn, th);
      const shortcut = ropeScore(data.q, data.k, 0, nn - mm, th);
      readout.replaceChildren(document.createTextNode(
        `offset n − m = ${nn - mm}; score (R(m)q)·(R(n)k) = ${score.toFixed(4)}; qᵀR(n − m)k = ${shortcut.toFixed(4)}`));
      readout.dataset.score = String(score);
      const rows = [0, 4, 8, 12].map((start) => el("tr", {}, [
        el("td", { text: String(start) }), el("td", { text: String(start + nn - mm) }),
        el("td", { text: ropeScore(data.q, data.k, start, start + nn - mm, th).toFixed(4) })]));
      same.replaceChildren(
        el("caption", { text: "The same offset at other positions gives the same score" }),
        el("thead", {}, [el("tr", {}, ["m", "n", "score"].map((h) => el("th", { scope: "col", text: h })))]),
        el("tbody", {}, rows));
    }
    [theta, m, n].forEach((s) => s.input.addEventListener("input", render));
    const legend = el("p", { class: "mha-legend", text: "Blue: the rotated query R(m)q. Orange: the rotated key R(n)k." });
    ui.append(el("div", { class: "mha-controls" }, [theta.wrap, m.wrap, n.wrap]),
      el("div", { class: "mha-rope-row" }, [svg, el("div", {}, [legend, readout, same])]));
    render();
  }

  function initPe(ui, data) {
    const d = slider("d_model", 2, 128, 2, data.d_model, (v) => String(v));
    const n = slider("positions", 2, 128, 1, data.n_positions, (v) => String(v));
    const canvas = el("canvas", { class: "mha-pe-canvas", role: "img", width: "512", height: "320" });
    const readout = el("p", { class: "mha-readout", "aria-live": "polite" });
    function render() {
      const D = d.input.valueAsNumber, N = n.input.valueAsNumber;
      const pe = peTable(N, D, data.base);
      const ctx = canvas.getContext("2d");
      const cw = canvas.width / D, ch = canvas.height / N;
      for (let p = 0; p < N; p++) {
        for (let j = 0; j < D; j++) {
          ctx.fillStyle = `rgb(${colour(PUOR, (pe[p][j] + 1) / 2).join(",")})`;
          ctx.fillRect(j * cw, p * ch, Math.ceil(cw), Math.ceil(ch));
        }
      }
      canvas.setAttribute("aria-label", `Sinusoidal encoding: ${N} positions (rows) by ${D} dimensions (columns), values from −1 (purple) to +1 (orange)`);
      const lam = wavelengths(D, data.base);
      readout.textContent = `${D / 2} pairs. Wavelengths 2π/ω: ` +
        lam.slice(0, 4).map((l, i) => `dims ${2 * i}–${2 * i + 1}: ${l.toFixed(2)}`).join(", ") +
        (lam.length > 4 ? ` … dims ${D - 2}–${D - 1}: ${lam[lam.length - 1].toFixed(2)}` : "") + " positions.";
      ui.dataset.dModel = String(D);
      ui.dataset.nPositions = String(N);
    }
    [d, n].forEach((s) => s.input.addEventListener("input", render));
    ui.append(el("div", { class: "mha-controls" }, [d.wrap, n.wrap]), canvas, readout);
    render();
  }

  const INIT = { heads: initHeads, rope: initRope, pe: initPe };

  function initAll() {
    document.querySelectorAll(".mha-explorer[data-explorer]").forEach((box) => {
      const ui = box.querySelector(".mha-explorer-ui");
      if (!ui || ui.dataset.ready || !INIT[box.dataset.explorer]) return; // its widget may register later
      const data = JSON.parse(box.querySelector(".mha-explorer-data").textContent);
      INIT[box.dataset.explorer](ui, data);
      ui.dataset.ready = "1";
      ui.hidden = false;
      const fallback = document.querySelector(`.mha-explorer-static[data-static-for="${box.dataset.explorer}"]`);
      if (fallback) fallback.hidden = true; // the static figure stays for readers without JavaScript
    });
  }

  // A widget in its own file registers with window.mhaExplorers.register("name", init).
  function register(name, init) {
    INIT[name] = init;
    if (document.readyState !== "loading") initAll();
  }

  window.mhaExplorers = { softmaxRow, headsInAction, rotate, ropeScore, peTable, wavelengths, register, colour, el };
  if (typeof document$ !== "undefined") document$.subscribe(initAll); // Material's instant navigation
  else document.addEventListener("DOMContentLoaded", initAll);
})();
