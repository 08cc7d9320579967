// Every select's title is the text of its chosen option, kept as the choice changes: where that text is wider
// than the select (a long run name or judge id at 390 px, cut with an ellipsis by static/css/atelier.css),
// hovering or a screen reader still gives all of it. Selects a page adds later get theirs on their first change
// or focus.
(function () {
  function entitle(select) {
    const chosen = select.selectedOptions[0];
    const text = chosen ? chosen.textContent.trim() : "";
    if (text) select.title = text;
    else select.removeAttribute("title");
  }

  function onEvent(event) {
    if (event.target instanceof HTMLSelectElement) entitle(event.target);
  }

  document.querySelectorAll("select").forEach(entitle);
  document.addEventListener("change", onEvent);
  document.addEventListener("focusin", onEvent);
  // A form reset puts back the first choice after the event: read it once the reset is done.
  document.addEventListener("reset", (event) => setTimeout(() => event.target.querySelectorAll("select").forEach(entitle)));
})();
