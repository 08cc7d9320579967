// Live campaign dashboard: poll the campaign's label count and say when new labels arrived since the
// page was computed (the statistics are recomputed on reload). The first answer is the baseline.
(function () {
  "use strict";
  const box = document.getElementById("live-status");
  if (!box) return;
  const EVERY_MS = 10000;
  let baseline = null;
  async function poll() {
    try {
      const response = await fetch(box.dataset.url, { credentials: "same-origin" });
      const status = await response.json();
      if (baseline === null) baseline = status.labels;
      const fresh = status.labels - baseline;
      if (fresh > 0) {
        box.replaceChildren(document.createTextNode(`${fresh} new label${fresh === 1 ? "" : "s"} since this page was computed — `));
        const link = document.createElement("a");
        link.href = window.location.pathname + window.location.search;
        link.textContent = "reload to update the statistics";
        box.appendChild(link);
        box.hidden = false;
      }
    } catch (e) { /* the next poll tries again */ }
    setTimeout(poll, EVERY_MS);
  }
  poll();
})();
