// A figure's PNG, drawn from its SVG by the reader's browser. The site serves each figure as SVG
// (with its fonts inside it) and PDF; a PNG link (hooks/figure_markdown.py: <a data-png="NAME.png"
// data-width="2400" data-background="#ffffff" href="NAME.svg">) draws the SVG on a canvas of that
// width (at least twice the figure's own size) over its theme's background and saves it as
// NAME.png: the figure as the page shows it, sharp on a full-width slide, and nothing to
// download but the SVG. Without JavaScript the links are not
// shown (.no-js, stylesheets/extra.css); the figure's command line writes a PNG too.
// One listener on the document, so it keeps working across Material's instant navigation.
// window.mhaSavePng(svg, name, options) does the same for an SVG made in the page (a viewer's
// head: a Blob or a URL), so that every PNG the site offers is drawn one way.
(() => {
  // the SVG at url drawn at width px (at least twice its own size) over background, saved as name
  async function savePng(url, name, width, background) {
    const img = new Image();
    img.src = url;
    await img.decode();
    width = Math.max(2 * img.naturalWidth, Number(width) || 0);
    const canvas = document.createElement("canvas");
    canvas.width = Math.round(width);
    canvas.height = Math.round((width * img.naturalHeight) / img.naturalWidth);
    const context = canvas.getContext("2d");
    context.fillStyle = background || "#ffffff"; // the theme's page colour, opaque
    context.fillRect(0, 0, canvas.width, canvas.height);
    context.drawImage(img, 0, 0, canvas.width, canvas.height);
    const blob = await new Promise((done) => canvas.toBlob(done, "image/png"));
    if (!blob) throw new Error("the canvas gave no PNG");
    const save = document.createElement("a");
    save.href = URL.createObjectURL(blob);
    save.download = name;
    document.body.append(save);
    save.click();
    save.remove();
    setTimeout(() => URL.revokeObjectURL(save.href), 60_000);
  }

  const draw = (link) => savePng(link.href, link.dataset.png, link.dataset.width, link.dataset.background);

  window.mhaSavePng = async (svg, name, { width = 0, background = "#ffffff" } = {}) => {
    const url = svg instanceof Blob ? URL.createObjectURL(svg) : svg;
    try {
      await savePng(url, name, width, background);
    } finally {
      if (svg instanceof Blob) URL.revokeObjectURL(url);
    }
  };

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
