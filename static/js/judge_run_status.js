// The judge run page follows its run: page data from json_script "judge-run-page" (status URL, and
// the leaderboard URL with 0 standing for the snapshot id).
(function () {
  const page = JSON.parse(document.getElementById("judge-run-page").textContent);
  followStatus(page.status_url, function (p) {
    document.getElementById("st").textContent = p.status;
    document.getElementById("tasks").textContent = p.tasks_done + "/" + p.tasks_total;
    document.getElementById("calls").textContent = p.comparisons_done;
    document.getElementById("planned").textContent = p.calls_planned;
    if (p.duration_seconds !== null && p.duration_seconds !== undefined) {
      document.getElementById("duration").textContent = p.duration_seconds + " s";
    }
    const share = p.calls_planned ? Math.min(100, 100 * p.comparisons_done / p.calls_planned) : 0;
    document.getElementById("bar").style.width = (p.status === "done" ? 100 : share) + "%";
    (p.chunks || []).forEach(function (chunk) {
      const row = document.querySelector('#chunks tr[data-task="' + chunk.task_id + '"]');
      if (!row) return;
      row.querySelector(".chunk-state").textContent = chunk.state;
      row.querySelector(".chunk-calls").textContent = chunk.calls_done + " / " + chunk.calls_planned;
    });
    const holder = document.getElementById("snapshot-link");
    if (p.snapshot && !holder.querySelector("a")) {
      const link = document.createElement("a");
      link.href = page.snapshot_url.replace("/0/", "/" + encodeURIComponent(p.snapshot) + "/");
      link.textContent = "Open the leaderboard";
      holder.replaceChildren(link);
      // Each task's judgments are browsable once the leaderboard exists.
      document.querySelectorAll("#chunks tr[data-task]").forEach(function (row) {
        const cell = row.lastElementChild;
        if (cell.querySelector("a")) return;
        const judgments = document.createElement("a");
        judgments.href = page.drilldown_url.replace("/0/tasks/0/", "/" + encodeURIComponent(p.snapshot) + "/tasks/" +
          encodeURIComponent(row.getAttribute("data-task")) + "/");
        judgments.textContent = "judgments";
        cell.replaceChildren(judgments);
      });
    }
  });
})();
