(function () {
  "use strict";
  var table = document.getElementById("questions");
  if (!table) { return; }
  var bodies = Array.prototype.slice.call(table.querySelectorAll("tbody.q"));
  function val(id) { var e = document.getElementById(id); return e ? (e.type === "checkbox" ? e.checked : e.value) : ""; }
  function apply() {
    var type = val("f-type"), cat = val("f-cat"), right = val("f-right"), miss = val("f-miss");
    var text = String(val("f-text") || "").toLowerCase(), shown = 0;
    bodies.forEach(function (b) {
      var ok = (!type || b.dataset.type === type) && (!cat || b.dataset.cat === cat) &&
        (!right || b.dataset.right === right) && (!miss || b.dataset.miss === "1") &&
        (!text || b.textContent.toLowerCase().indexOf(text) >= 0);
      b.hidden = !ok;
      if (ok) { shown += 1; }
    });
    var count = document.getElementById("f-count");
    if (count) { count.textContent = shown + " of " + bodies.length + " shown"; }
  }
  function sort() {
    var how = val("f-sort");
    bodies.sort(function (a, b) {
      if (how === "lost") {
        var d = parseFloat(b.dataset.lost) - parseFloat(a.dataset.lost);
        if (d !== 0) { return d; }
      }
      if (how === "order") { return parseInt(a.dataset.order, 10) - parseInt(b.dataset.order, 10); }
      return a.dataset.id < b.dataset.id ? -1 : (a.dataset.id > b.dataset.id ? 1 : 0);
    });
    bodies.forEach(function (b) { table.appendChild(b); });
  }
  ["f-type", "f-cat", "f-right", "f-miss", "f-text"].forEach(function (id) {
    var e = document.getElementById(id);
    if (e) { e.addEventListener("input", apply); e.addEventListener("change", apply); }
  });
  var s = document.getElementById("f-sort");
  if (s) { s.addEventListener("change", function () { sort(); apply(); }); }
  bodies.forEach(function (b) {
    var row = b.querySelector("tr.sum"), det = b.querySelector("tr.det");
    function toggle() { det.hidden = !det.hidden; }
    row.addEventListener("click", toggle);
    row.addEventListener("keydown", function (e) { if (e.key === "Enter") { toggle(); } });
  });
  if (location.hash.indexOf("#q-") === 0) {
    var target = document.getElementById(location.hash.slice(1));
    if (target) { target.querySelector("tr.det").hidden = false; }
  }
  sort();
  apply();
})();
