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
  // Filters: the text box (every word must appear) and the facet selects (exact value of a column) combine.
  function applyFilters(table) {
    var input = document.querySelector('input.filter[data-table="' + table.id + '"]');
    var words = input ? input.value.toLowerCase().split(/\s+/).filter(Boolean) : [];
    var facets = Array.prototype.slice.call(document.querySelectorAll('select[data-table="' + table.id + '"]'));
    var shown = 0;
    Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
      var text = row.textContent.toLowerCase();
      var ok = words.every(function (w) { return text.indexOf(w) >= 0; }) && facets.every(function (select) {
        return !select.value || row.getAttribute("data-f-" + select.getAttribute("data-facet").replace(/_/g, "-"))
          === select.value;
      });
      row.style.display = ok ? "" : "none";
      if (ok) shown += 1;
    });
    var count = table.closest("main").querySelector(".toolbar .count");
    if (count) count.textContent = shown + " of " + table.tBodies[0].rows.length + " shown";
  }
  document.querySelectorAll("input.filter, select[data-facet]").forEach(function (control) {
    var table = document.getElementById(control.getAttribute("data-table"));
    if (!table) return;
    control.addEventListener(control.tagName === "SELECT" ? "change" : "input", function () { applyFilters(table); });
  });

  // Steps: ↑/↓ (or k/j) move between steps; the address keeps the step (#step-N) so a link opens it.
  function stepItems() { return Array.prototype.slice.call(document.querySelectorAll("li.step")); }
  function goToStep(li) {
    if (!li) return;
    var d = li.querySelector("details");
    if (d) d.open = true;
    li.scrollIntoView({block: "start"});
    var summary = li.querySelector("summary");
    if (summary) summary.focus({preventScroll: true});
    history.replaceState(null, "", "#" + li.id);
    document.querySelectorAll("li.step.current").forEach(function (o) { o.classList.remove("current"); });
    li.classList.add("current");
  }
  document.addEventListener("keydown", function (event) {
    var tag = (event.target.tagName || "").toUpperCase();
    if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA" || event.altKey || event.ctrlKey || event.metaKey) return;
    var forward = event.key === "ArrowDown" || event.key === "j", back = event.key === "ArrowUp" || event.key === "k";
    if (!forward && !back) return;
    var items = stepItems();
    if (!items.length) return;
    var current = document.querySelector("li.step.current");
    var at = current ? items.indexOf(current) : -1;
    var next = forward ? Math.min(items.length - 1, at + 1) : Math.max(0, at - 1);
    event.preventDefault();
    goToStep(items[next]);
  });
  if (/^#step-\d+$/.test(location.hash)) goToStep(document.getElementById(location.hash.slice(1)));

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

  // Raw model calls (local viewer only): the list, then each call's request and response, fetched when opened.
  var callsLoaded = null;
  function loadCalls() {
    if (callsLoaded) return callsLoaded;
    var button = document.querySelector("button.load-calls"), list = document.querySelector(".calls-list");
    if (!button || !list) return Promise.resolve();
    button.disabled = true;
    callsLoaded = fetch(button.getAttribute("data-src")).then(function (r) { return r.text(); }).then(function (html) {
      list.innerHTML = html;
      button.style.display = "none";
      list.querySelectorAll("ol.calls details").forEach(function (d) {
        d.addEventListener("toggle", function () {
          var body = d.querySelector(".call-body");
          if (d.open && body && !body.getAttribute("data-loaded")) {
            body.setAttribute("data-loaded", "1");
            fetch(body.getAttribute("data-src")).then(function (r) { return r.text(); })
              .then(function (part) { body.innerHTML = part; });
          }
        });
      });
    });
    return callsLoaded;
  }
  var callsButton = document.querySelector("button.load-calls");
  if (callsButton) {
    callsButton.addEventListener("click", loadCalls);
    if (callsButton.getAttribute("data-auto")) loadCalls();
  }
  document.addEventListener("click", function (event) {
    var link = event.target.closest ? event.target.closest("a.call-link") : null;
    if (!link) return;
    event.preventDefault();
    loadCalls().then(function () {
      var item = document.getElementById("call-" + link.getAttribute("data-call"));
      if (!item) return;
      var d = item.querySelector("details");
      d.open = true;
      item.scrollIntoView();
      history.replaceState(null, "", "#call-" + link.getAttribute("data-call"));
    });
  });

  // Live viewer (a run in progress): every 2 s the page is fetched again and its tables' rows replaced (filters,
  // sort order and open panels kept); an episode page gets its new steps.  Not over file:// (a bundle is fixed).
  function refreshTables(fresh) {
    document.querySelectorAll("table.sortable[id]").forEach(function (table) {
      var other = fresh.getElementById(table.id);
      if (!other || other.tBodies[0].innerHTML === table.tBodies[0].innerHTML) return;
      table.tBodies[0].innerHTML = other.tBodies[0].innerHTML;
      var sorted = table.querySelector("thead th[data-dir]");
      if (sorted) {  // sort again the same way
        var col = Array.prototype.indexOf.call(sorted.parentNode.children, sorted);
        sorted.setAttribute("data-dir", sorted.getAttribute("data-dir") === "asc" ? "desc" : "asc");
        sortBy(table, sorted, col);
      }
      applyFilters(table);
      document.documentElement.setAttribute("data-refreshed", String(Date.now()));
    });
    var steps = document.querySelector("ol.steps"), other = fresh.querySelector("ol.steps");
    if (steps && other && other.children.length !== steps.children.length) {
      location.reload();  // new steps: the chunked trajectory is rebuilt (the scroll position is kept)
    }
  }
  if (document.body.getAttribute("data-live") && /^https?:$/.test(location.protocol)) {
    setInterval(function () {
      fetch(location.href, {cache: "no-store"}).then(function (r) { return r.ok ? r.text() : null; })
        .then(function (html) {
          if (html) refreshTables(new DOMParser().parseFromString(html, "text/html"));
        }).catch(function () {});
    }, 2000);
  }

  // Writable folder pages (local viewer only): <form data-post="ACTION"> is posted as a JSON object of its fields
  // (the clicked button's name and value included) with the page's per-launch token; reload on success.
  var tokenMeta = document.querySelector('meta[name="harness-token"]');
  document.querySelectorAll("form[data-post]").forEach(function (form) {
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var body = {}, status = form.querySelector(".post-status");
      new FormData(form).forEach(function (value, name) { body[name] = value; });
      if (event.submitter && event.submitter.name) body[event.submitter.name] = event.submitter.value;
      fetch(form.getAttribute("data-post"), {method: "POST", cache: "no-store", body: JSON.stringify(body),
        headers: {"Content-Type": "application/json", "X-Harness-Token": tokenMeta ? tokenMeta.content : ""}})
        .then(function (r) {
          if (r.ok) { location.reload(); return; }
          return r.text().then(function (text) {
            if (status) status.textContent = text; else alert(text);
          });
        });
    });
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
