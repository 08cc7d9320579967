// EASEL run page: follow the run's status.json with the shared poller (live_status.js).
(function () {
  const status = document.getElementById("easel-status");
  if (!status || !window.followStatus) return;
  const text = (id, value) => { document.getElementById(id).textContent = value; };
  window.followStatus(status.dataset.url, function (p) {
    text("easel-st", p.status);
    text("easel-episodes", p.episodes_done + "/" + p.episodes_total);
    text("easel-steps", p.steps_done + "/" + p.steps_planned);
    const share = p.episodes_total ? 100 * p.episodes_done / p.episodes_total : 0;
    document.getElementById("easel-bar").style.width = (p.status === "done" ? 100 : share) + "%";
    const error = document.getElementById("easel-error");
    error.textContent = p.error || "";
    error.hidden = !p.error;
  });
})();
