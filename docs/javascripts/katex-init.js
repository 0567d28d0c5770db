// Render the math that pymdownx.arithmatex leaves as \( \) and \[ \] in .arithmatex
// elements, on first load and after every instant-navigation page change.
document$.subscribe(({ body }) => {
  renderMathInElement(body, {
    delimiters: [
      { left: "\\[", right: "\\]", display: true },
      { left: "\\(", right: "\\)", display: false },
      { left: "$$", right: "$$", display: true },
    ],
    throwOnError: false,
  });
});
