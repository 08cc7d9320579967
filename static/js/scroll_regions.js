// Keyboard access to every box that scrolls (WCAG 2.1.1; axe-core's "scrollable-region-focusable"): a
// table wider than its card at 1400 px or 390 px, a long response box. Such a box gets tabindex=0, so the
// arrow keys scroll it, and a name: its table's caption or the heading of its section. A table keeps its
// role (a name only); any other box becomes a named region. Checked on load, on resize and when a page
// changes its content (the annotation page draws each item).
(function () {
  const SELECTOR = "main div, main table, main pre, main ul, main ol, main section, main figure";

  function scrolls(el) {
    const style = getComputedStyle(el);
    const x = /(auto|scroll)/.test(style.overflowX) && el.scrollWidth > el.clientWidth + 1;
    const y = /(auto|scroll)/.test(style.overflowY) && el.scrollHeight > el.clientHeight + 1;
    return x || y;
  }

  function nameOf(el) {
    const caption = el.querySelector("caption");
    if (caption && caption.textContent.trim()) return caption.textContent.trim();
    const holder = el.closest("section, .card, details, figure") || el.parentElement;
    const heading = holder && holder.querySelector("h1, h2, h3, h4, summary, figcaption");
    return (heading ? heading.textContent.trim().replace(/\s+/g, " ") : "Table") + " (scrolls)";
  }

  function mark() {
    document.querySelectorAll(SELECTOR).forEach((el) => {
      if (el.dataset.scrollRegion === "auto" && !scrolls(el)) {
        el.removeAttribute("tabindex");
        delete el.dataset.scrollRegion;
        return;
      }
      if (el.hasAttribute("tabindex") || !scrolls(el)) return;
      el.setAttribute("tabindex", "0");
      el.dataset.scrollRegion = "auto";
      if (!el.hasAttribute("aria-label") && !el.hasAttribute("aria-labelledby")) el.setAttribute("aria-label", nameOf(el));
      if (el.tagName === "DIV" && !el.hasAttribute("role")) el.setAttribute("role", "region");
    });
  }

  let pending = null;
  const soon = () => { clearTimeout(pending); pending = setTimeout(mark, 60); };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mark);
  else mark();
  window.addEventListener("resize", soon);
  window.addEventListener("load", soon);
  const main = document.querySelector("main");
  if (main && window.MutationObserver) {
    new MutationObserver(soon).observe(main, { childList: true, subtree: true });
  }
})();
