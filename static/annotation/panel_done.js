/* A crowd study's end page (issue 25): send the participant back to their panel (Prolific's completion
 * URL carries their code) a moment after showing the code, so it can be noted down. */
(function () {
  "use strict";
  const link = document.getElementById("panel-return");
  if (link) setTimeout(() => location.assign(link.href), Number(link.dataset.delayMs || 2500));
})();
