// Where a number comes from. Every number the build inserts is a
// <span class="mha-value" data-source="SCRIPT PATH" data-prov="KEY"> (hooks/provenance.py);
// each figure's and table's reuse row carries data-prov="KEY" too. The page holds the records
// as JSON (<div class="mha-provenance" hidden data-records="...">): the script, its parameters, the command that
// recomputes it, the stored measurement it reads, the tests that name it (those that compute
// its numbers first). Nothing is fetched.
//
// Hover a number (mouse), focus it (Tab) or tap it: a box under it says where it comes from.
// It is positioned over the page (nothing moves); Esc or a tap elsewhere closes it, and focus
// goes back to the number. Tab goes from the number into the box's links, and from the last
// one on to what follows the number. A number
// inside a formula opens on hover and tap (a formula's drawing is hidden from screen readers,
// which read its MathML; the figure's or table's reuse row and the script's page say the same).
// A reuse row gets a "Where from" button that opens the same box. Without JavaScript the
// numbers are plain text and the reuse rows link the script's page.
// One set of listeners on the document, so it keeps working across Material's instant navigation.
(() => {
  const VALUE = ".mha-value, .katex [data-source]";
  let box = null;
  let shownFor = null;
  let pinned = false;
  let hideTimer = 0;
  let returning = false;

  function records() {
    const all = {};
    for (const el of document.querySelectorAll(".mha-provenance[data-records]")) {
      try { Object.assign(all, JSON.parse(el.dataset.records)); } catch (e) { /* a damaged block: no box */ }
    }
    return all;
  }

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text != null) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }

  function row(dl, term, ...content) {
    dl.append(el("dt", term));
    const dd = el("dd");
    dd.append(...content);
    dl.append(dd);
  }

  function fill(target) {
    const rec = records()[target.dataset.prov];
    if (!rec) return false;
    box.replaceChildren();
    const source = target.dataset.source || "";
    const path = source.includes(" ") ? source.slice(source.indexOf(" ") + 1) : "";
    const head = el("p", null, "mha-prov-head");
    const script = el("a");
    script.href = rec.url;
    script.append(el("code", rec.script + ".py"));
    if (path) head.append(el("strong", target.textContent.trim()), " is computed by ", script, ": ");
    else head.append("Made by ", script, ": ");
    head.append(el("span", rec.title));
    box.append(head);
    const dl = el("dl");
    if (path) row(dl, "In its data()", el("code", path));
    row(dl, "Parameters", rec.params.length ? el("code", rec.params.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(", "))
      : "its defaults");
    for (const s of rec.stored) {
      row(dl, "Stored measurement", el("code", s.file), `: ${s.what}. ${[s.machine, s.date].filter(Boolean).join(", ")}; made by ${s.by}.`);
    }
    row(dl, "Recompute", el("code", rec.command));
    const tests = el("ul");
    for (const t of rec.tests) {
      const li = el("li");
      li.append(el("code", t));
      tests.append(li);
    }
    const more = rec.tests_total - rec.tests.length;
    const checked = [];
    if (rec.tests_total) checked.push(tests);
    if (more > 0) checked.push(el("p", `and ${more} more on the script's page.`));
    if (!rec.tests_total) checked.push(el("p", "none names this script."));
    if (rec.library.length) {
      checked.push(el("p", "The library code it calls, and the tests that name it: " +
        rec.library.map(([f, n]) => `${f} (${n} test${n === 1 ? "" : "s"})`).join(", ") + "."));
    }
    row(dl, "Tests that name it", ...checked);
    box.append(dl);
    const link = el("a", "The script, its source and every test that names it");
    link.href = rec.url;
    box.append(el("p", null, "mha-prov-foot"));
    box.lastChild.append(link);
    return true;
  }

  // Under the number (above it where the screen has no room below), inside the screen's width;
  // absolutely positioned, so nothing on the page moves.
  function place(target) {
    const r = target.getBoundingClientRect();
    const screen = document.documentElement.clientWidth;
    const width = Math.min(420, screen - 16);
    box.style.width = `${width}px`;
    const origin = (box.offsetParent || document.documentElement).getBoundingClientRect();
    // within the article's column where it is wide enough (not over the table of contents)
    const column = (document.querySelector(".md-content__inner") || document.body).getBoundingClientRect();
    const [lo, hi] = column.width >= width ? [column.left, column.right] : [8, screen - 8];
    const left = Math.max(lo, Math.min(r.left, hi - width));
    box.style.left = `${left - origin.left}px`;
    box.style.top = `${r.bottom - origin.top + 6}px`;
    const height = box.getBoundingClientRect().height;
    if (r.bottom + 6 + height > window.innerHeight && r.top > height + 12) {
      box.style.top = `${r.top - origin.top - height - 6}px`;
    }
  }

  function show(target, pin) {
    clearTimeout(hideTimer);
    if (!box) {
      box = el("div", null, "mha-prov");
      box.id = "mha-prov";
      box.setAttribute("role", "dialog");
      box.setAttribute("aria-label", "Where this comes from");
      box.hidden = true;
      box.addEventListener("pointerenter", () => clearTimeout(hideTimer));
      box.addEventListener("pointerleave", () => { if (!pinned) hideSoon(); });
      box.addEventListener("focusout", (e) => { if (!box.contains(e.relatedTarget) && e.relatedTarget !== shownFor) hide(false); });
    }
    if (shownFor !== target && !fill(target)) return;
    if (shownFor && shownFor !== target && shownFor.hasAttribute("aria-expanded")) shownFor.setAttribute("aria-expanded", "false");
    // right after the article's block that holds the number (a paragraph, a table, a box), so
    // that Tab goes from there into the box, and outside any box that scrolls or clips
    const block = target.closest(".md-content__inner > *");
    (block || target).after(box);
    box.hidden = false;
    shownFor = target;
    pinned = pinned || pin;
    if (target.hasAttribute("aria-expanded")) target.setAttribute("aria-expanded", "true");
    place(target);
  }

  function hide(refocus) {
    clearTimeout(hideTimer);
    if (!box || box.hidden) return;
    box.hidden = true;
    pinned = false;
    const was = shownFor;
    shownFor = null;
    if (was && was.hasAttribute("aria-expanded")) was.setAttribute("aria-expanded", "false");
    if (refocus && was && was.isConnected && was.tabIndex >= 0) {
      returning = true; // focus goes back to the number without opening its box again
      was.focus();
      returning = false;
    }
  }

  function hideSoon() {
    clearTimeout(hideTimer);
    hideTimer = setTimeout(() => hide(false), 300);
  }

  function targetOf(node) {
    return node && node.closest ? node.closest(`${VALUE}, .mha-prov-button`) : null;
  }

  // The numbers a keyboard reaches: not inside a link, a button, a summary (one control in
  // another) or a formula's drawing (hidden from screen readers); a reuse row's button.
  function mark() {
    for (const v of document.querySelectorAll(".mha-value:not([role])")) {
      if (v.closest("a, button, summary, .katex")) continue;
      v.setAttribute("role", "button");
      v.setAttribute("tabindex", "0");
      v.setAttribute("aria-haspopup", "dialog");
      v.setAttribute("aria-expanded", "false");
    }
    for (const reuse of document.querySelectorAll(".mha-reuse[data-prov]")) {
      if (reuse.querySelector(".mha-prov-button")) continue;
      const b = el("button", "Where from", "mha-prov-button");
      b.type = "button";
      b.dataset.prov = reuse.dataset.prov;
      b.setAttribute("aria-haspopup", "dialog");
      b.setAttribute("aria-expanded", "false");
      const credit = reuse.querySelector(".mha-credit");
      if (credit) {
        credit.before(b);
        b.after(" · ");
      } else reuse.append(" · ", b);
    }
  }

  document.addEventListener("pointerover", (e) => {
    if (e.pointerType !== "mouse") return;
    const t = targetOf(e.target);
    if (t && !t.classList.contains("mha-prov-button")) { if (!pinned || t === shownFor) show(t, false); }
    else if (box && !box.hidden && !pinned && !box.contains(e.target)) hideSoon();
  });
  document.addEventListener("focusin", (e) => {
    if (returning) return;
    const t = targetOf(e.target);
    if (t && !t.classList.contains("mha-prov-button")) show(t, false);
  });
  document.addEventListener("focusout", (e) => {
    if (box && !box.hidden && e.target === shownFor && !box.contains(e.relatedTarget)) hide(false);
  });
  document.addEventListener("click", (e) => {
    const t = targetOf(e.target);
    if (t) {
      if (t === shownFor && pinned) hide(false);
      else { pinned = false; show(t, true); }
    } else if (box && !box.hidden && !box.contains(e.target)) hide(false);
  });
  // Tab from the number goes into its box, and on from the box's last link to what follows the
  // number (the box sits after the number's whole block, which may hold other controls first).
  const FOCUSABLE = "a[href], button, input, select, textarea, [tabindex]:not([tabindex='-1'])";
  function focusables() {
    return Array.from(document.querySelectorAll(FOCUSABLE))
      .filter((f) => !box.contains(f) && f.getClientRects().length > 0 && !f.closest("[hidden], [inert]"));
  }
  function tab(e) {
    if (e.key !== "Tab" || !box || box.hidden || !shownFor) return false;
    const inBox = Array.from(box.querySelectorAll(FOCUSABLE));
    if (!inBox.length) return false;
    let to = null;
    if (e.target === shownFor && !e.shiftKey) to = inBox[0];
    else if (e.target === inBox[0] && e.shiftKey) to = shownFor;
    else if (e.target === inBox[inBox.length - 1] && !e.shiftKey) {
      const all = focusables();
      to = all[all.indexOf(shownFor) + 1] || null;
      hide(false);
    }
    if (!to) return false;
    e.preventDefault();
    to.focus();
    return true;
  }

  document.addEventListener("keydown", (e) => {
    if (tab(e)) return;
    const t = targetOf(e.target);
    if (e.key === "Escape" && box && !box.hidden) { hide(true); }
    else if (t && t.getAttribute("role") === "button" && (e.key === "Enter" || e.key === " ")) {
      e.preventDefault();
      show(t, true);
    }
  });
  window.addEventListener("resize", () => { if (shownFor && box && !box.hidden) place(shownFor); });

  mark();
  if (typeof document$ !== "undefined") document$.subscribe(() => { hide(false); box = null; mark(); });
})();
