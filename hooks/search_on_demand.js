/* The search index loads when the reader goes to search, not with every page.
 *
 * The theme's bundle requests search/search_index.json (about 470 KB, 130 KB compressed) as
 * soon as a page loads. Most visits never search, and on a slow phone connection that request
 * competes with the page's own stylesheets, fonts and figures. hooks/site_speed.py puts this
 * script inline, just before the bundle, in every page: it holds the bundle's request for the
 * index back until the reader shows they want to search, then sends it unchanged. Until then the
 * search box says "Initializing search", as it does while any index loads.
 *
 * What releases the request: the pointer over the search box or its magnifier (the index then
 * loads while the reader moves to it), a press or a focus inside the search box (this covers the
 * theme's keys / s f, which focus it), and a page opened with ?q= (a search to run) or ?h= (words
 * to highlight, which the index supplies). Any other request passes straight through.
 */
(function () {
  "use strict";
  var INDEX = /\/search\/search_index\.json(?:[?#]|$)/;
  var open = XMLHttpRequest.prototype.open;
  var send = XMLHttpRequest.prototype.send;
  var wanted = false;
  var held = [];

  function release() {
    if (wanted) return;
    wanted = true;
    document.documentElement.setAttribute("data-mha-search-index", "requested");
    held.splice(0).forEach(function (go) { go(); });
  }
  if (/[?&](?:q|h)=/.test(location.search)) release();

  XMLHttpRequest.prototype.open = function (method, url) {
    this.mhaSearchIndex = INDEX.test(String(url));
    return open.apply(this, arguments);
  };
  XMLHttpRequest.prototype.send = function () {
    var xhr = this, args = arguments;
    if (!xhr.mhaSearchIndex || wanted) return send.apply(xhr, args);
    held.push(function () { send.apply(xhr, args); });
  };

  function inSearch(target) {
    return target instanceof Element &&
      !!target.closest('form[name="search"], .md-search, label[for="__search"]');
  }
  ["pointerover", "pointerdown", "focusin"].forEach(function (type) {
    document.addEventListener(type, function (event) {
      if (inSearch(event.target)) release();
    }, { capture: true, passive: true });
  });
  document.addEventListener("change", function (event) {
    if (event.target instanceof Element && event.target.id === "__search") release();
  }, true);
})();
