// Live status of a long job (a judge run, a TIG build): poll its JSON status until it is done or
// failed, handing every answer to the page's own update(status). A failed request is retried later.
window.followStatus = function (url, update) {
  async function poll() {
    try {
      const response = await fetch(url, {credentials: "same-origin"});
      const status = await response.json();
      update(status);
      if (status.status !== "done" && status.status !== "failed") setTimeout(poll, 1000);
    } catch (e) {
      setTimeout(poll, 3000);
    }
  }
  poll();
};
