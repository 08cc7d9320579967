// Every chart of the site downloadable as a figure a paper can use (issue 26): beside each svg.chart, three
// buttons — SVG and PNG (the chart with its caption below it) and the data it was drawn from as CSV (the
// <metadata class="chart-data"> JSON that leaderboard/charts.py writes into every chart). Nothing is asked
// of the server: the files are made here from what the page shows.
(function () {
  const NS = "http://www.w3.org/2000/svg";
  const FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";

  function captionOf(svg) {
    const figure = svg.closest("figure");
    const caption = figure && figure.querySelector("figcaption");
    const text = caption ? caption.textContent : (svg.getAttribute("aria-label") || "");
    return text.replace(/\s+/g, " ").trim();
  }

  function slug(svg) {
    const title = svg.getAttribute("aria-label") || "figure";
    return title.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "").slice(0, 60) || "figure";
  }

  // Words into lines of at most `chars` characters.
  function wrap(text, chars) {
    const lines = [];
    let line = "";
    text.split(" ").forEach((word) => {
      if (line && (line + " " + word).length > chars) { lines.push(line); line = word; }
      else line = line ? line + " " + word : word;
    });
    if (line) lines.push(line);
    return lines;
  }

  // A standalone copy of the chart: its own size, font, white background and the caption under it.
  function standalone(svg) {
    const box = svg.viewBox.baseVal;
    const width = box.width, height = box.height;
    const copy = svg.cloneNode(true);
    const caption = captionOf(svg);
    const lines = caption ? wrap(caption, Math.max(40, Math.floor(width / 6.2))) : [];
    const total = height + (lines.length ? 12 + 15 * lines.length : 0);
    copy.setAttribute("viewBox", `0 0 ${width} ${total}`);
    copy.setAttribute("width", String(width));
    copy.setAttribute("height", String(total));
    copy.setAttribute("font-family", FONT);
    copy.removeAttribute("class");
    const background = document.createElementNS(NS, "rect");
    background.setAttribute("width", "100%");
    background.setAttribute("height", "100%");
    background.setAttribute("fill", "#fff");
    copy.insertBefore(background, copy.firstChild.nextSibling);
    if (caption) {
      const desc = document.createElementNS(NS, "desc");
      desc.textContent = caption;
      copy.insertBefore(desc, copy.firstChild.nextSibling);
      lines.forEach((text, k) => {
        const t = document.createElementNS(NS, "text");
        t.setAttribute("x", "4");
        t.setAttribute("y", String(height + 14 + 15 * k));
        t.setAttribute("font-size", "11");
        t.setAttribute("fill", "#1d1f24");
        t.textContent = text;
        copy.appendChild(t);
      });
    }
    return { text: new XMLSerializer().serializeToString(copy), width, height: total };
  }

  function save(blob, name) {
    const url = URL.createObjectURL(blob);
    const a = document.createElement("a");
    a.href = url;
    a.download = name;
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  }

  function csvCell(v) {
    if (v === null || v === undefined) return "";
    if (typeof v === "boolean") return v ? "true" : "false";
    let s = String(v);
    if (typeof v === "string" && /^'*[ \t\n\r\f\v\u0085\u00a0\u1680\u2000-\u200b\u2028\u2029\u202f\u205f\u3000\ufeff]*[=+\-@\t\r\x00]/.test(s)) s = "'" + s;  // as engine/csv_cells.py
    return /[",\r\n]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
  }

  function dataCsv(svg) {
    const block = svg.querySelector("metadata.chart-data");
    if (!block) return null;
    const data = JSON.parse(block.textContent);
    return [data.columns].concat(data.rows).map((row) => row.map(csvCell).join(",")).join("\r\n") + "\r\n";
  }

  function png(svg, name, scale) {
    const figure = standalone(svg);
    const url = URL.createObjectURL(new Blob([figure.text], { type: "image/svg+xml" }));
    const image = new Image();
    image.onload = () => {
      const canvas = document.createElement("canvas");
      canvas.width = Math.round(figure.width * scale);
      canvas.height = Math.round(figure.height * scale);
      const context = canvas.getContext("2d");
      context.fillStyle = "#fff";
      context.fillRect(0, 0, canvas.width, canvas.height);
      context.drawImage(image, 0, 0, canvas.width, canvas.height);
      URL.revokeObjectURL(url);
      canvas.toBlob((blob) => save(blob, name), "image/png");
    };
    image.src = url;
  }

  function button(text, label, onClick) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "link";
    b.textContent = text;
    b.setAttribute("aria-label", label);
    b.addEventListener("click", onClick);
    return b;
  }

  document.querySelectorAll("svg.chart").forEach((svg) => {
    const name = slug(svg);
    const title = svg.getAttribute("aria-label") || "this figure";
    const bar = document.createElement("p");
    bar.className = "chart-downloads muted";
    bar.append("Download: ");
    bar.append(button("SVG", `SVG of ${title}`, () => {
      save(new Blob([standalone(svg).text], { type: "image/svg+xml" }), name + ".svg");
    }));
    bar.append(" · ");
    bar.append(button("PNG", `PNG of ${title}`, () => png(svg, name + ".png", 2)));
    const csv = dataCsv(svg);
    if (csv !== null) {
      bar.append(" · ");
      bar.append(button("data (CSV)", `data (CSV) of ${title}`, () => {
        save(new Blob([csv], { type: "text/csv" }), name + "-data.csv");
      }));
    }
    // a frame that lets the chart keep its natural size and scroll sideways on a phone (atelier.css)
    if (!svg.parentElement.classList.contains("chart-frame")) {
      const frame = document.createElement("div");
      frame.className = "chart-frame";
      svg.before(frame);
      frame.appendChild(svg);
    }
    // inside the chart's figure (a grid of figures keeps its cells), else right after the chart's frame
    const figure = svg.closest("figure");
    if (figure) figure.appendChild(bar); else svg.parentElement.after(bar);
  });
})();
