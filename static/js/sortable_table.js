// Sortable tables: click a <th data-sort="num|text"> of a table.sortable to sort its body by that
// column (again to reverse). A cell's data-value, when present, is what is compared.
(function () {
  "use strict";

  function cellValue(row, index, numeric) {
    const cell = row.children[index];
    if (!cell) return numeric ? -Infinity : "";
    const raw = cell.hasAttribute("data-value") ? cell.getAttribute("data-value") : cell.textContent.trim();
    if (!numeric) return raw.toLowerCase();
    const value = parseFloat(raw);
    return Number.isNaN(value) ? -Infinity : value;
  }

  function sortBy(table, header) {
    const headers = Array.from(header.parentElement.children);
    const index = headers.indexOf(header);
    const numeric = header.getAttribute("data-sort") === "num";
    const ascending = header.getAttribute("aria-sort") !== "ascending";
    headers.forEach((h) => h.removeAttribute("aria-sort"));
    header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    const body = table.tBodies[0];
    const rows = Array.from(body.rows);
    rows.sort((a, b) => {
      const x = cellValue(a, index, numeric);
      const y = cellValue(b, index, numeric);
      const order = x < y ? -1 : x > y ? 1 : 0;
      return ascending ? order : -order;
    });
    rows.forEach((row) => body.appendChild(row));
  }

  document.querySelectorAll("table.sortable").forEach((table) => {
    table.querySelectorAll("th[data-sort]").forEach((header) => {
      header.tabIndex = 0;
      header.addEventListener("click", () => sortBy(table, header));
      header.addEventListener("keydown", (event) => {
        if (event.key === "Enter" || event.key === " ") {
          event.preventDefault();
          sortBy(table, header);
        }
      });
    });
  });
})();
