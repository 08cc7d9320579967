// The calibrated board's "style-controlled" toggle applies at once: a change submits its form
// (the page is rendered on the server with ?style=1; without JavaScript the Show button does it).
(function () {
  "use strict";
  var toggle = document.getElementById("style-toggle");
  if (toggle && toggle.form) {
    toggle.addEventListener("change", function () { toggle.form.submit(); });
  }
})();
