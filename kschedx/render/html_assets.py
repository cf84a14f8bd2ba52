"""The inline stylesheet and script of the HTML report (render/html.py).

Colours carry meaning only, as in the terminal: green pass, red the failure
kube-scheduler reports, pale red failures it did not reach; every cell also
says it in text (✓, a count, a title).
"""

STYLE = """
:root{--pass:#2e7d32;--fail:#c62828;--also:#ef9a9a;--muted:#666;--line:#ddd;--bg:#fff;--fg:#1a1a1a}
*{box-sizing:border-box}
body{margin:0;padding:1.5rem 2rem;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;
 color:var(--fg);background:var(--bg)}
h1{margin:0 0 .2rem;font-size:1.6rem}h2{margin:1.8rem 0 .6rem;font-size:1.25rem}
h3{margin:1.2rem 0 .3rem;font-size:1rem}
.meta,.muted{color:var(--muted)}
.summary{font-size:1.05rem}
table.alternatives{margin:.3rem 0 .8rem}table.alternatives caption{text-align:left;color:var(--muted)}
.badge{display:inline-block;margin-left:.4rem;padding:.05rem .5rem;border-radius:1rem;background:#eee;font-size:.85rem}
.badge.scheduled{background:#e8f5e9;color:var(--pass)}
.badge.unschedulable,.badge.error{background:#ffebee;color:var(--fail)}
.badge.gated{background:#fff8e1;color:#8d6e00}
.notices{padding:.6rem 1rem .6rem 2rem;background:#fffde7;border:1px solid #f0e0a0;border-radius:6px}
.notices .warn{font-weight:600;color:#8d6e00}
details.pod{margin:.6rem 0;border:1px solid var(--line);border-left:5px solid var(--pass);border-radius:6px;
 padding:.5rem .9rem}
details.pod.fail{border-left-color:var(--fail)}
details.pod>summary{cursor:pointer;font-size:1.05rem}
.name{font-weight:600;font-family:ui-monospace,Menlo,Consolas,monospace}
.verdict{margin-left:.6rem;font-weight:600}
.verdict.ok,td.ok{color:var(--pass)}.verdict.fail,td.fail{color:var(--fail)}
pre.message{white-space:pre-wrap;background:#fafafa;border:1px solid var(--line);border-radius:4px;
 padding:.5rem .7rem;font-size:.9rem}
table{border-collapse:collapse}
th,td{padding:.2rem .5rem;border-bottom:1px solid var(--line);text-align:left;vertical-align:middle}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.scroll{overflow-x:auto;max-width:100%}
table.heat td{text-align:center;min-width:2.2rem;font-variant-numeric:tabular-nums}
table.heat th.rot{height:9rem;white-space:nowrap;vertical-align:bottom;padding:0 .1rem}
table.heat th.rot>span{display:inline-block;transform:rotate(-60deg);transform-origin:left bottom;
 width:1.6rem;margin-left:1rem}
table.heat td.pass{color:var(--pass)}
table.heat td.first{background:rgba(198,40,40,calc(.35 + .65*var(--share,1)));color:#fff;font-weight:700}
table.heat td.also{background:rgba(239,154,154,calc(.25 + .75*var(--share,1)))}
table.heat td.skip{color:#aaa}
table.heat tr.group{cursor:pointer}
table.heat tr.group:hover,table.heat tr.group:focus{background:#f3f6fb;outline:none}
table.heat tr.group th{white-space:nowrap;font-weight:600}
table.heat tr.node th{font-weight:400;padding-left:1.8rem;font-family:ui-monospace,Menlo,Consolas,monospace}
table.heat tr.more td{text-align:left}
.twisty{display:inline-block;transition:transform .1s}
tr.group.open .twisty{transform:rotate(90deg)}
.key{padding:0 .3rem;border-radius:3px}.key.first{background:var(--fail);color:#fff}.key.also{background:var(--also)}
table.scores td.bar{width:60vw;min-width:20rem}
.stack{display:flex;width:100%;height:1rem}
.seg{flex:none;height:100%}
.legends{margin:.4rem 0}.legend{margin-right:1rem;white-space:nowrap}
.swatch{display:inline-block;width:.8rem;height:.8rem;margin-right:.3rem;vertical-align:middle;border-radius:2px}
.controls{margin:.4rem 0}
.controls input[type=search]{padding:.3rem .5rem;min-width:18rem;border:1px solid #bbb;border-radius:4px}
table.sortable th[data-type]{cursor:pointer;user-select:none}
table.sortable th[aria-sort=ascending]::after{content:" ▲"}
table.sortable th[aria-sort=descending]::after{content:" ▼"}
td.usage{min-width:16rem}
.ubar{display:block;height:.45rem;margin:.1rem 0;background:#eee;border-radius:2px;overflow:hidden;width:12rem}
.ubar>span{display:block;height:100%}
.ubar>.before{background:#9e9e9e}.ubar>.after{background:#1565c0}
.pct{font-size:.8rem;color:var(--muted)}
td.msg{font-size:.85rem;max-width:40rem}
section.fixes{margin:.6rem 0}section.fixes .warn{font-weight:600;color:#8d6e00}section.fixes h3{margin:.2rem 0}
section.fixes ol{padding-left:1.4rem}section.fixes li{margin:.4rem 0}
.kind{display:inline-block;font-size:.8rem;padding:0 .35rem;border-radius:3px;background:#e3f2fd;color:#0d47a1}
.kind.cluster{background:#fff3e0;color:#e65100}
.copyable{position:relative}
pre.patch,pre.command{white-space:pre-wrap;font-size:.8rem;background:#fafafa;border:1px solid var(--line);
  border-radius:4px;padding:.3rem 2.6rem .3rem .4rem;margin:.2rem 0}
button.copy{position:absolute;top:.2rem;right:.2rem;font-size:.7rem;cursor:pointer}
"""

SCRIPT = r"""
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('kschedx-data').textContent);
  var PAGE = 200;  // node rows added per click: thousands of nodes stay responsive
  var WORDS = {S: '\u2713 pass', '-': 'skipped', U: '\u2717 Unschedulable',
               X: '\u2717 UnschedulableAndUnresolvable', E: '\u2717 Error'};

  function cell(tag, text, cls, title) {
    var c = document.createElement(tag);
    c.textContent = text;
    if (cls) { c.className = cls; }
    if (title) { c.title = title; }
    return c;
  }

  function nodeRow(key, pod, group, n) {
    var tr = document.createElement('tr');
    tr.className = 'node';
    tr.dataset.owner = key;
    tr.appendChild(cell('th', n[0]));
    var codes = n[1];
    for (var i = 0; i < pod.plugins.length; i++) {
      var code = codes.charAt(i);
      var failing = code === 'U' || code === 'X' || code === 'E';
      var reported = failing && pod.plugins[i] === group.reported;
      var cls = reported ? 'first' : failing ? 'also' : code === '-' ? 'skip' : 'pass';
      var text = reported ? '\u2717' : failing ? '(\u2717)' : code === '-' ? '\u2013' : '\u2713';
      var why = n[2][String(i)];
      tr.appendChild(cell('td', text, cls, pod.plugins[i] + ': ' + WORDS[code] + (why ? ' \u2014 ' + why : '')));
    }
    return tr;
  }

  function addRows(row, after, start) {
    var pod = data.pods[+row.dataset.pod];
    var group = pod.groups[+row.dataset.group];
    var key = row.dataset.pod + '/' + row.dataset.group;
    if (group.omitted) {
      var note = document.createElement('tr');
      note.className = 'more';
      note.dataset.owner = key;
      var cellNote = cell('td', 'node list left out of this report (' + group.omitted + ' nodes; too many nodes ' +
                          '\u00d7 pods for one page): see -o json, or explain this pod alone');
      cellNote.colSpan = pod.plugins.length + 1;
      note.appendChild(cellNote);
      after.after(note);
      return;
    }
    var end = Math.min(group.nodes.length, start + PAGE);
    var frag = document.createDocumentFragment();
    for (var i = start; i < end; i++) { frag.appendChild(nodeRow(key, pod, group, group.nodes[i])); }
    if (end < group.nodes.length) {
      var more = document.createElement('tr');
      more.className = 'more';
      more.dataset.owner = key;
      var td = cell('td', '');
      td.colSpan = pod.plugins.length + 1;
      var button = cell('button', 'show ' + Math.min(PAGE, group.nodes.length - end) + ' more of ' +
                        (group.nodes.length - end) + ' nodes');
      button.type = 'button';
      button.addEventListener('click', function () {
        var last = more.previousSibling;
        more.remove();
        addRows(row, last, end);
      });
      td.appendChild(button);
      more.appendChild(td);
      frag.appendChild(more);
    }
    after.after(frag);
  }

  function toggle(row) {
    var key = row.dataset.pod + '/' + row.dataset.group;
    if (row.classList.contains('open')) {
      row.parentNode.querySelectorAll('tr[data-owner="' + key + '"]').forEach(function (r) { r.remove(); });
      row.classList.remove('open');
      row.setAttribute('aria-expanded', 'false');
      return;
    }
    row.classList.add('open');
    row.setAttribute('aria-expanded', 'true');
    addRows(row, row, 0);
  }

  document.querySelectorAll('table.heat tr.group').forEach(function (row) {
    row.addEventListener('click', function () { toggle(row); });
    row.addEventListener('keydown', function (ev) {
      if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); toggle(row); }
    });
  });

  function sortValue(row, col, numeric) {
    var c = row.cells[col];
    var v = c.dataset.sort !== undefined ? c.dataset.sort : c.textContent;
    return numeric ? parseFloat(v) || 0 : v.toLowerCase();
  }

  document.querySelectorAll('table.sortable').forEach(function (table) {
    table.querySelectorAll('thead th[data-type]').forEach(function (th) {
      th.addEventListener('click', function () {
        var col = th.cellIndex;
        var numeric = th.dataset.type === 'num';
        var dir = th.getAttribute('aria-sort') === 'ascending' ? -1 : 1;
        table.querySelectorAll('thead th').forEach(function (h) { h.removeAttribute('aria-sort'); });
        th.setAttribute('aria-sort', dir > 0 ? 'ascending' : 'descending');
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = sortValue(a, col, numeric), y = sortValue(b, col, numeric);
          return (x < y ? -1 : x > y ? 1 : 0) * dir;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });

  function applyFilters(id) {
    var table = document.getElementById(id);
    var text = document.querySelector('input.filter[data-table="' + id + '"]');
    var changed = document.querySelector('input.changed[data-table="' + id + '"]');
    var needle = text ? text.value.trim().toLowerCase() : '';
    Array.prototype.forEach.call(table.tBodies[0].rows, function (r) {
      var show = (!needle || r.textContent.toLowerCase().indexOf(needle) >= 0) &&
                 (!changed || !changed.checked || r.dataset.changed === '1');
      r.hidden = !show;
    });
  }

  document.querySelectorAll('input.filter, input.changed').forEach(function (input) {
    input.addEventListener('input', function () { applyFilters(input.dataset.table); });
    input.addEventListener('change', function () { applyFilters(input.dataset.table); });
  });

  // Fixes: each patch and command copied with one click (the text selected
  // where the clipboard is not offered, as for a file:// page).
  function selectText(pre) {
    var range = document.createRange();
    range.selectNodeContents(pre);
    var sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
  }
  document.querySelectorAll('button.copy').forEach(function (button) {
    button.addEventListener('click', function () {
      var pre = button.parentNode.querySelector('pre');
      var done = function () { button.textContent = 'copied'; };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(pre.textContent).then(done, function () { selectText(pre); });
      } else {
        selectText(pre);
        try { if (document.execCommand('copy')) { done(); } } catch (err) { /* selected: copy by hand */ }
      }
    });
  });
})();
"""
