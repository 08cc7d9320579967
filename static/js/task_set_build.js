// Live progress of a task-set build (Algorithm 1): follow its status.json and reload the page once the
// build is done, so that the diagnostics and rejected candidates appear.
(function () {
  const status = document.getElementById("build-status");
  if (!status) return;
  const initial = JSON.parse(document.getElementById("build-progress").textContent);
  if (initial.status === "done" || initial.status === "failed") return;
  window.followStatus(status.dataset.url, function (p) {
    document.getElementById("build-st").textContent = p.status;
    document.getElementById("build-stage").textContent = p.stage;
    document.getElementById("build-kept").textContent = p.tasks_kept + "/" + p.tasks_total;
    document.getElementById("build-bar").style.width = (100 * p.share) + "%";
    const err = document.getElementById("build-error");
    err.textContent = p.error;
    err.hidden = !p.error;
    if (p.status === "done") window.location.reload();
  });
})();
