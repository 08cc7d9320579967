// The TIG build page follows its build: page data from json_script "tig-build-page" (status URL,
// share of the work done when the page was rendered).
(function () {
  const page = JSON.parse(document.getElementById("tig-build-page").textContent);
  document.getElementById("bar").style.width = (100 * page.share) + "%";
  followStatus(page.status_url, function (p) {
    document.getElementById("st").textContent = p.status;
    document.getElementById("stage").textContent = p.stage;
    document.getElementById("tasks").textContent = p.tasks_done + "/" + p.tasks_total;
    document.getElementById("responses").textContent = p.responses_extracted + "/" + p.responses_total;
    document.getElementById("bar").style.width = (100 * p.share) + "%";
    const err = document.getElementById("error");
    err.textContent = p.error; err.hidden = !p.error;
    const link = document.getElementById("viewer-link");
    if (link) link.hidden = p.status !== "done";
    document.getElementById("resume").hidden = !p.may_resume;
  });
})();
