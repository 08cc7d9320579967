// The page's messages (Django's, shown above the content) are announced (WCAG 4.1.3): their box is a live
// region (role="alert" when one is an error or a warning, else role="status"), and since a region already
// on the page when it loads may go unread, focus moves to it on load (tabindex=-1: not in the tab order),
// unless the page has already put focus somewhere (an autofocus field). A redirect's message ("This campaign
// is paused for review…" on the queue) is then read first, not left behind the page's navigation.
(function () {
  function focusMessages() {
    const box = document.getElementById("messages");
    if (!box) return;
    const active = document.activeElement;
    if (active && active !== document.body && active !== document.documentElement) return;
    box.focus({ preventScroll: false });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", focusMessages);
  else focusMessages();
})();
