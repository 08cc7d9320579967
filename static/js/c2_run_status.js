// Live status of a C² run page: follow its status.json (live_status.js followStatus) and update the bar.
(function () {
  const status = document.getElementById("c2-status");
  if (!status) return;
  followStatus(status.dataset.url, function (p) {
    document.getElementById("c2-st").textContent = p.status;
    document.getElementById("c2-prompts").textContent = p.prompts_done + "/" + p.prompts_total;
    document.getElementById("c2-calls").textContent = p.calls_done + "/" + p.calls_planned;
    const share = p.calls_planned ? Math.min(100, 100 * p.calls_done / p.calls_planned) : 0;
    document.getElementById("c2-bar").style.width = (p.status === "done" ? 100 : share) + "%";
    if (p.has_results) {
      const link = document.getElementById("c2-leaderboard-link");
      if (!link.querySelector("a")) {
        const a = document.createElement("a");
        a.href = status.dataset.leaderboard;
        a.textContent = "Open the leaderboard";
        link.appendChild(a);
      }
    }
  });
})();
