// One live status for every job page (judge, EASEL and C² runs, TIG and task-set builds), driven by data-*
// attributes, so that a page says what it shows and no page needs a script of its own. It follows the URL
// in the [data-run-status] element's attribute with followStatus (live_status.js) and, on each answer p:
//   data-run-field="f"            text = p.f (left as it is when p.f is null); data-run-suffix appended
//   data-run-ratio="a/b"          text = "p.a/p.b" (data-run-separator between, "/" by default)
//   data-run-bar="a/b" | "share"  width = 100·p.a/p.b, or 100·p.share; 100 % once done (and aria-valuenow of
//                                 the enclosing [data-run-meter] progressbar)
//   data-run-error                text = p.error, hidden when there is none; marked "waiting" (a notice, not
//                                 an error) while the job is pending, e.g. queued until workers can be reached
//   data-run-show="key"           hidden unless p.key (or "status=done": unless p.status is done)
//   data-run-link="key"           once p.key is set: a link to data-run-href with {id} = p.key and {row} = the
//                                 enclosing [data-run-row]'s value, text data-run-link-text
//   data-run-rows="list" + rows [data-run-row=v] with data-run-row-key="k" on the table: for each item of
//                                 p.list whose k is v, the row's [data-run-cell="f"] and [data-run-cell-ratio]
//   data-run-reload-when-done     on the status element: reload the page when a job seen unfinished is done
(function () {
  const root = document.querySelector("[data-run-status]");
  if (!root || !window.followStatus) return;
  const each = (selector, scope, fn) => (scope || document).querySelectorAll(selector).forEach(fn);
  const ratio = (p, spec, sep) => { const [a, b] = spec.split("/"); return p[a] + (sep || "/") + p[b]; };
  let seenUnfinished = root.dataset.runInitial !== "done";

  function update(p) {
    each("[data-run-field]", null, (el) => {
      const value = p[el.dataset.runField];
      if (value !== null && value !== undefined) el.textContent = value + (el.dataset.runSuffix || "");
    });
    each("[data-run-ratio]", null, (el) => { el.textContent = ratio(p, el.dataset.runRatio, el.dataset.runSeparator); });
    each("[data-run-bar]", null, (el) => {
      const [a, b] = el.dataset.runBar.split("/");
      const share = b === undefined ? 100 * (p[a] || 0) : (p[b] ? Math.min(100, 100 * p[a] / p[b]) : 0);
      const width = p.status === "done" ? 100 : share;
      el.style.width = width + "%";
      const meter = el.closest("[data-run-meter]");  // the role=progressbar box around the bar
      if (meter) meter.setAttribute("aria-valuenow", String(Math.round(width)));
    });
    each("[data-run-error]", null, (el) => {
      el.textContent = p.error || "";
      el.hidden = !p.error;
      el.classList.toggle("waiting", p.status === "pending");
    });
    each("[data-run-show]", null, (el) => {
      const key = el.dataset.runShow;
      el.hidden = key.startsWith("status=") ? p.status !== key.slice("status=".length) : !p[key];
    });
    each("[data-run-rows]", null, (table) => {
      const key = table.dataset.runRowKey;
      (p[table.dataset.runRows] || []).forEach((item) => {
        const row = table.querySelector('[data-run-row="' + item[key] + '"]');
        if (!row) return;
        each("[data-run-cell]", row, (cell) => { cell.textContent = item[cell.dataset.runCell]; });
        each("[data-run-cell-ratio]", row, (cell) => {
          cell.textContent = ratio(item, cell.dataset.runCellRatio, cell.dataset.runSeparator);
        });
      });
    });
    each("[data-run-link]", null, (holder) => {
      const id = p[holder.dataset.runLink];
      if (!id || holder.querySelector("a")) return;
      const row = holder.closest("[data-run-row]");
      const link = document.createElement("a");
      link.href = holder.dataset.runHref.replace("{id}", encodeURIComponent(id))
        .replace("{row}", row ? encodeURIComponent(row.dataset.runRow) : "");
      link.textContent = holder.dataset.runLinkText;
      holder.replaceChildren(link);
    });
    if (p.status !== "done") seenUnfinished = true;
    else if (seenUnfinished && "runReloadWhenDone" in root.dataset) window.location.reload();
  }
  window.followStatus(root.dataset.runStatus, update);
})();
