// EASEL episode viewer: a scrubber through the stored canvases (keyboard ←/→), with the step's action,
// validity, collision and S beside it. Page data comes from json_script "easel-viewer-data".
(function () {
  const source = document.getElementById("easel-viewer-data");
  if (!source) return;
  const data = JSON.parse(source.textContent);
  const canvas = document.getElementById("easel-canvas");
  const label = document.getElementById("easel-frame-label");
  const scrubber = document.getElementById("easel-scrubber");
  const detail = document.getElementById("easel-step-detail");
  const byIndex = new Map(data.steps.map((s) => [s.index, s]));

  // Frame 0 is the initial canvas; then every step whose canvas is stored; then the final canvas
  // when the last step's own canvas was not kept (long episodes keep every k-th).
  const frames = [{index: 0, src: data.canvas_prefix + "0.png"}];
  data.steps.forEach((s) => { if (s.has_canvas) frames.push({index: s.index, src: data.canvas_prefix + s.index + ".png"}); });
  if (data.final_index !== null && frames[frames.length - 1].index !== data.final_index) {
    frames.push({index: data.final_index, src: data.final_url});
  }
  scrubber.max = String(frames.length - 1);

  function describe(step) {
    if (!step) return "Initial canvas" + (data.initial_s !== null ? " · S₀ " + data.initial_s.toFixed(3) : "");
    const parts = ["Step " + step.index + " of " + data.budget, step.kind, step.valid ? "valid" : "invalid"];
    if (step.collision) parts.push("collision (rejected, one step used)");
    if (step.s !== null) parts.push("S " + step.s.toFixed(3));
    if (step.index === data.best_index) parts.push("Best");
    if (step.index === data.final_index) parts.push("Final");
    return parts.join(" · ");
  }

  function show(position) {
    const k = Math.max(0, Math.min(frames.length - 1, position));
    const frame = frames[k];
    const step = byIndex.get(frame.index);
    scrubber.value = String(k);
    canvas.src = frame.src;
    label.textContent = frame.index === 0 ? "Canvas before step 1" : "Canvas after step " + frame.index;
    detail.textContent = "";
    const line = document.createElement("p");
    line.textContent = describe(step);
    line.className = step && !step.valid ? "error" : "";
    detail.appendChild(line);
    if (step) {
      const code = document.createElement("pre");
      code.className = "easel-json";
      code.textContent = step.action ? JSON.stringify(step.action) : step.raw;
      detail.appendChild(code);
      if (step.error) {
        const error = document.createElement("p");
        error.className = "error small";
        error.textContent = step.error;
        detail.appendChild(error);
      }
    }
    document.querySelectorAll("#easel-steps tr.current").forEach((row) => row.classList.remove("current"));
    const row = document.querySelector('#easel-steps tr[data-index="' + frame.index + '"]');
    if (row) row.classList.add("current");
    detail.dataset.index = String(frame.index);
  }

  scrubber.addEventListener("input", () => show(Number(scrubber.value)));
  document.addEventListener("keydown", (event) => {
    if (event.key !== "ArrowLeft" && event.key !== "ArrowRight") return;
    const target = event.target;
    if (target !== scrubber && target.closest && target.closest("input, textarea, select")) return;
    event.preventDefault();
    show(Number(scrubber.value) + (event.key === "ArrowRight" ? 1 : -1));
  });
  document.querySelectorAll("#easel-steps tr[data-index]").forEach((row) => {
    row.addEventListener("click", () => {
      const index = Number(row.dataset.index);
      let k = 0;
      frames.forEach((frame, position) => { if (frame.index <= index) k = position; });
      show(k);
    });
  });
  show(0);
})();
