// Click-to-zoom on figures. hooks/site_numbering.py wraps each figure's images in
// <a class="mha-zoom" href="LIGHT.svg"> (without JavaScript the link opens the SVG itself);
// here a click, Enter or Space opens the image the reader sees (light or dark variant, wide or
// narrow) in a modal <dialog> on the page's own background colour. In it: click or tap the
// image to magnify it twice (and again to fit), scroll or drag to move, pinch on a phone,
// Esc or the close button to leave; focus goes back to the figure.
// One listener on the document, so it keeps working across Material's instant navigation.
(() => {
  let dialog = null;
  let opener = null;

  function visibleImage(link) {
    return Array.from(link.querySelectorAll("img")).find((img) => img.getClientRects().length > 0);
  }

  function build() {
    const d = document.createElement("dialog");
    d.className = "mha-zoom-dialog";
    d.innerHTML =
      '<div class="mha-zoom-bar"><span class="mha-zoom-hint"></span>' +
      '<button type="button" class="mha-zoom-close" aria-label="Close the enlarged figure">×</button></div>' +
      '<div class="mha-zoom-body"><img alt=""></div><div class="mha-zoom-caption"></div>';
    const body = d.querySelector(".mha-zoom-body");
    const img = body.querySelector("img");
    d.querySelector(".mha-zoom-hint").textContent = matchMedia("(pointer: coarse)").matches
      ? "Tap the figure to magnify it, or pinch" : "Click the figure to magnify it · Esc closes";
    d.querySelector(".mha-zoom-close").addEventListener("click", () => d.close());
    img.addEventListener("click", (e) => toggle(body, img, e));
    body.addEventListener("click", (e) => { if (e.target === body) d.close(); }); // the empty space around
    d.addEventListener("close", () => {
      document.documentElement.classList.remove("mha-zoom-open");
      img.removeAttribute("src");
      if (opener && opener.isConnected) opener.focus();
      opener = null;
    });
    document.body.append(d);
    return d;
  }

  // Fit <-> magnified (twice the fitted size, or 1000 px wide on a phone, at most 4 times),
// keeping the point that was clicked in the middle of the view.
  function toggle(body, img, e) {
    if (img.classList.contains("mha-zoomed")) {
      img.classList.remove("mha-zoomed");
      img.style.width = "";
      return;
    }
    const box = img.getBoundingClientRect();
    const ratio = img.naturalWidth && img.naturalHeight ? img.naturalWidth / img.naturalHeight : box.width / box.height;
    const fitWidth = Math.min(box.width, box.height * ratio); // the image's size inside its box (object-fit)
    const fx = (e.clientX - box.left - (box.width - fitWidth) / 2) / fitWidth;
    const fy = (e.clientY - box.top - (box.height - fitWidth / ratio) / 2) / (fitWidth / ratio);
    img.classList.add("mha-zoomed");
    img.style.width = `${Math.round(fitWidth * Math.min(4, Math.max(2, 1000 / fitWidth)))}px`;
    body.scrollLeft = fx * img.offsetWidth - body.clientWidth / 2;
    body.scrollTop = fy * img.offsetHeight - body.clientHeight / 2;
  }

  function open(link) {
    const shown = visibleImage(link);
    if (!shown) return false;
    dialog = dialog && dialog.isConnected ? dialog : build();
    const img = dialog.querySelector(".mha-zoom-body img");
    img.classList.remove("mha-zoomed");
    img.style.width = "";
    img.alt = shown.alt;
    img.src = (shown.currentSrc || shown.src).split("#")[0]; // no #only-light/#only-dark: never hidden here
    const caption = dialog.querySelector(".mha-zoom-caption");
    const figcaption = link.closest("figure")?.querySelector("figcaption");
    caption.replaceChildren(...(figcaption ? Array.from(figcaption.childNodes, (n) => n.cloneNode(true)) : []));
    const number = figcaption?.querySelector(".mha-num")?.textContent.replace(/\.$/, "");
    dialog.setAttribute("aria-label", `${number || "Figure"}, enlarged`);
    opener = link;
    document.documentElement.classList.add("mha-zoom-open");
    dialog.showModal();
    dialog.querySelector(".mha-zoom-close").focus();
    return true;
  }

  document.addEventListener("click", (e) => {
    const link = e.target.closest && e.target.closest("a.mha-zoom");
    if (!link || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return; // new tab: the SVG
    if (open(link)) e.preventDefault();
  }, true); // capture: before instant navigation looks at the link
  document.addEventListener("keydown", (e) => {
    const link = e.target.closest && e.target.closest("a.mha-zoom");
    if (link && e.key === " " && open(link)) e.preventDefault(); // a button opens on Space too
  });

  // What the link is once this script runs: a button that opens a dialog.
  function mark() {
    document.querySelectorAll("a.mha-zoom:not([role])").forEach((link) => {
      link.setAttribute("role", "button");
      link.setAttribute("aria-haspopup", "dialog");
    });
  }
  if (typeof document$ !== "undefined") document$.subscribe(mark); // Material's instant navigation
  else if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mark);
  else mark();
})();

// The reuse row under each figure and table (its files, its command line, a credit line: seven
// grey lines on a phone) is one line there, a button that opens it, followed by the row's parts
// in one span that is not displayed while the row is closed (so neither seen, nor focused, nor
// read aloud). extra.css closes the row from the first paint, where scripts run (`@media
// (scripting: enabled)`), so adding the button moves nothing; a browser that does not know that
// media query shows the row open and gets no button. Desktops show the row open, no button.
(() => {
  const LABEL = "Reuse and credit";
  function add() {
    if (!matchMedia("(scripting: enabled)").matches) return;
    document.querySelectorAll(".md-typeset .mha-reuse:not(:has(> .mha-reuse-toggle))").forEach((row) => {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "mha-reuse-toggle";
      button.textContent = LABEL;
      button.setAttribute("aria-expanded", "false");
      button.addEventListener("click", () => {
        const open = row.classList.toggle("mha-open");
        button.setAttribute("aria-expanded", String(open));
        button.textContent = open ? "Hide" : LABEL;
      });
      const body = document.createElement("span"); // the row's parts, hidden together while closed
      body.className = "mha-reuse-body";
      body.append(...row.childNodes);
      row.append(button, body);
    });
  }
  if (typeof document$ !== "undefined") document$.subscribe(add); // Material's instant navigation
  else if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", add);
  else add();
})();
