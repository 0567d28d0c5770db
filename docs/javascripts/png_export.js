// A figure's PNG, drawn from its SVG by the reader's browser. The site serves each figure as SVG
// (with its fonts inside it) and PDF; a PNG link (hooks/figure_markdown.py: <a data-png="NAME.png"
// data-width="2400" data-background="#ffffff" href="NAME.svg">) draws the SVG on a canvas of that
// width (at least twice the figure's own size) over its theme's background and saves it as
// NAME.png: the figure as the page shows it, sharp on a full-width slide, and nothing to
// download but the SVG. Without JavaScript the links are not
// shown (.no-js, stylesheets/extra.css); the figure's command line writes a PNG too.
// One listener on the document, so it keeps working across Material's instant navigation.
(() => {
  async function draw(link) {
    const img = new Image();
    img.src = link.href;
    await img.decode();
    const width = Math.max(2 * img.naturalWidth, Number(link.dataset.width) || 0);
    const canvas = document.createElement("canvas");
    canvas.width = Math.round(width);
    canvas.height = Math.round((width * img.naturalHeight) / img.naturalWidth);
    const context = canvas.getContext("2d");
    context.fillStyle = link.dataset.background || "#ffffff"; // the theme's page colour, opaque
    context.fillRect(0, 0, canvas.width, canvas.height);
    context.drawImage(img, 0, 0, canvas.width, canvas.height);
    const blob = await new Promise((done) => canvas.toBlob(done, "image/png"));
    if (!blob) throw new Error("the canvas gave no PNG");
    const save = document.createElement("a");
    save.href = URL.createObjectURL(blob);
    save.download = link.dataset.png;
    document.body.append(save);
    save.click();
    save.remove();
    setTimeout(() => URL.revokeObjectURL(save.href), 60_000);
  }

  document.addEventListener("click", (event) => {
    const link = event.target.closest && event.target.closest("a[data-png]");
    if (!link) return;
    event.preventDefault();
    link.setAttribute("aria-busy", "true");
    draw(link)
      .catch((error) => {
        // say so, and open the SVG instead: it is the same figure
        console.warn(`PNG of ${link.dataset.png} could not be drawn (${error}); opening the SVG`);
        window.open(link.href, "_blank", "noopener");
      })
      .finally(() => link.removeAttribute("aria-busy"));
  });
})();
