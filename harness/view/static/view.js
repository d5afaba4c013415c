// harness view: sortable/filterable tables and step bodies loaded chunk by chunk (works over file:// too).
(function () {
  "use strict";
  function sortKey(cell) {
    var v = cell.getAttribute("data-sort");
    if (v !== null && v !== "" && !isNaN(Number(v))) return Number(v);
    return cell.textContent.trim().toLowerCase();
  }
  // Sortable tables: a header's first click sorts its data-first direction (the best first for a score),
  // the next reverses it; headers are reachable with Tab and sort with Enter or Space; aria-sort says how.
  function sortBy(table, th, col) {
    var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
    var current = th.getAttribute("data-dir");
    var next = current ? (current === "asc" ? "desc" : "asc") : (th.getAttribute("data-first") || "asc");
    var dir = next === "asc" ? 1 : -1;
    table.querySelectorAll("thead th").forEach(function (o) {
      o.removeAttribute("data-dir");
      o.setAttribute("aria-sort", "none");
    });
    th.setAttribute("data-dir", next);
    th.setAttribute("aria-sort", next === "asc" ? "ascending" : "descending");
    rows.sort(function (a, b) {
      var x = sortKey(a.cells[col]), y = sortKey(b.cells[col]);
      var xe = x === "" || x === "–", ye = y === "" || y === "–";
      if (xe || ye) return xe === ye ? 0 : (xe ? 1 : -1);  // empty cells last either way
      if (typeof x === typeof y) return (x < y ? -1 : x > y ? 1 : 0) * dir;
      return (typeof x === "number" ? -1 : 1) * dir;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    table.querySelectorAll("thead th").forEach(function (th, col) {
      th.setAttribute("tabindex", "0");
      th.setAttribute("aria-sort", "none");
      th.addEventListener("click", function () { sortBy(table, th, col); });
      th.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") {
          event.preventDefault();
          sortBy(table, th, col);
        }
      });
    });
  });
  document.querySelectorAll("input.filter").forEach(function (input) {
    var table = document.getElementById(input.getAttribute("data-table"));
    input.addEventListener("input", function () {
      var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
        var text = row.textContent.toLowerCase();
        row.style.display = words.every(function (w) { return text.indexOf(w) >= 0; }) ? "" : "none";
      });
    });
  });

  document.querySelectorAll("input.only-diff").forEach(function (box) {
    box.addEventListener("change", function () {
      var table = document.getElementById("diff");
      if (table) table.classList.toggle("only-diff", box.checked);
    });
  });

  // A link to an anchor inside a folded <details> (a cited document) unfolds it first.
  document.addEventListener("click", function (event) {
    var link = event.target.closest ? event.target.closest('a[href^="#"]') : null;
    var target = link && document.getElementById(link.getAttribute("href").slice(1));
    for (var node = target; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") node.open = true;
    }
  });

  // Trajectory: summaries are in the page; bodies come from steps-<k>.js, loaded when a chunk nears the viewport.
  var total = window.HARNESS_CHUNKS || 0, requested = {};
  window.harnessView = {
    steps: function (chunk, items) {
      items.forEach(function (item) {
        var body = document.getElementById("body-" + item[0]);
        if (body) body.innerHTML = item[1];
      });
      document.documentElement.setAttribute("data-chunk-" + chunk, "loaded");
      if (window.performance && performance.mark) performance.mark("harness-chunk-" + chunk);
    }
  };
  function load(chunk) {
    if (chunk >= total || requested[chunk]) return;
    requested[chunk] = true;
    var s = document.createElement("script");
    s.src = "steps-" + chunk + ".js";
    document.body.appendChild(s);
  }
  if (total > 0) {
    var steps = document.querySelectorAll("li.step");
    if ("IntersectionObserver" in window) {
      var seen = new IntersectionObserver(function (entries) {
        entries.forEach(function (e) {
          if (e.isIntersecting) load(Number(e.target.getAttribute("data-chunk")));
        });
      }, {rootMargin: "600px"});
      steps.forEach(function (li) { seen.observe(li); });
    } else {
      for (var k = 0; k < total; k++) load(k);
    }
    var all = document.querySelector("button.load-all");
    if (all) all.addEventListener("click", function () { for (var k = 0; k < total; k++) load(k); });
  }
})();
