// The status page: one HTML document, one stylesheet and one script, all served by the admin
// listener under a strict Content-Security-Policy (no inline script or style, no external asset).
// The script polls /status.json and builds every node with DOM calls; every string that comes
// from an upstream or a client is inserted with `textContent`, never as markup.

/** The page, `GET /`. */
export const STATUS_PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Switchyard status</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/status.css">
<script src="/status.js" defer></script>
</head>
<body>
<header>
<h1>Switchyard</h1>
<span id="ready" class="badge">loading</span>
<span id="reasons"></span>
<span id="updated"></span>
</header>
<p id="failure" hidden></p>
<main>
<section>
<h2>Upstreams</h2>
<table id="upstreams">
<thead><tr><th>Name</th><th>Server</th><th>Era</th><th>Transport</th><th>State</th><th>In flight</th><th>Calls (5 min)</th><th>p50 (5 min)</th><th>p99 (5 min)</th><th>Last error</th></tr></thead>
<tbody></tbody>
</table>
</section>
<section>
<h2>Mounts</h2>
<table id="mounts">
<thead><tr><th>Mount</th><th>URL</th><th>Dialect</th><th>Sessions</th><th>Streams</th></tr></thead>
<tbody></tbody>
</table>
</section>
<section>
<h2>Requests (last 10 minutes)</h2>
<table id="methods">
<thead><tr><th>Method</th><th>Requests</th><th>Errors</th><th>Rate over time (requests, errors per 10 s)</th></tr></thead>
<tbody></tbody>
</table>
</section>
<section>
<h2>Recent refusals</h2>
<table id="refusals">
<thead><tr><th>When</th><th>Code</th><th>HTTP status</th><th>Mount</th><th>Dialect</th></tr></thead>
<tbody></tbody>
</table>
</section>
</main>
</body>
</html>
`;

/** The stylesheet, `GET /status.css`. */
export const STATUS_PAGE_CSS = `:root { color-scheme: light dark; font-family: system-ui, sans-serif; font-size: 14px; }
body { margin: 1.5rem; }
header { display: flex; align-items: baseline; gap: 1rem; flex-wrap: wrap; }
h1 { font-size: 1.4rem; margin: 0; }
h2 { font-size: 1.1rem; margin: 1.5rem 0 0.5rem; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 0.25rem 0.6rem; border-bottom: 1px solid #8884; vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.error { max-width: 28rem; overflow-wrap: anywhere; }
.badge { padding: 0.1rem 0.6rem; border-radius: 0.8rem; background: #8883; }
.badge.ready { background: #2a7d2a; color: #fff; }
.badge.not-ready { background: #b02a2a; color: #fff; }
.state-up { color: #2a7d2a; }
.state-down { color: #b02a2a; font-weight: bold; }
.state-starting, .state-draining { color: #a06a00; }
#failure { color: #b02a2a; }
#updated, #reasons { color: #888; }
svg.spark { width: 240px; height: 32px; }
svg.spark polyline { fill: none; stroke-width: 1.5; }
svg.spark polyline.requests { stroke: #3a6fd8; }
svg.spark polyline.errors { stroke: #d83a3a; }
`;

/** The script, `GET /status.js`. */
export const STATUS_PAGE_SCRIPT = `'use strict';
(function () {
  var SVG = 'http://www.w3.org/2000/svg';
  var POLL_MS = 2000;
  var STATES = ['starting', 'up', 'down', 'draining'];

  function cell(value, cls) {
    var td = document.createElement('td');
    if (value instanceof Node) td.appendChild(value);
    else td.textContent = value === undefined || value === null ? '' : String(value);
    if (cls) td.className = cls;
    return td;
  }
  function row(cells) {
    var tr = document.createElement('tr');
    for (var i = 0; i < cells.length; i++) tr.appendChild(cells[i]);
    return tr;
  }
  function fill(id, rows) {
    var tbody = document.querySelector('#' + id + ' tbody');
    tbody.replaceChildren.apply(tbody, rows);
  }
  function duration(ms) {
    if (ms === null || ms === undefined) return '\\u2013';
    if (ms < 10) return ms.toFixed(2) + ' ms';
    if (ms < 1000) return Math.round(ms) + ' ms';
    return (ms / 1000).toFixed(2) + ' s';
  }
  function sum(xs) {
    var n = 0;
    for (var i = 0; i < xs.length; i++) n += xs[i];
    return n;
  }
  function line(values, max, cls) {
    var width = 240, height = 32, points = [];
    var step = values.length > 1 ? width / (values.length - 1) : width;
    for (var i = 0; i < values.length; i++) {
      var y = height - 1 - (values[i] / max) * (height - 2);
      points.push((i * step).toFixed(1) + ',' + y.toFixed(1));
    }
    var p = document.createElementNS(SVG, 'polyline');
    p.setAttribute('points', points.join(' '));
    p.setAttribute('class', cls);
    return p;
  }
  function spark(series, slotMs) {
    var svg = document.createElementNS(SVG, 'svg');
    svg.setAttribute('class', 'spark');
    svg.setAttribute('viewBox', '0 0 240 32');
    svg.setAttribute('role', 'img');
    var max = Math.max(1, Math.max.apply(null, series.requests));
    var title = document.createElementNS(SVG, 'title');
    title.textContent = series.method + ': ' + sum(series.requests) + ' requests, ' + sum(series.errors) + ' errors, per ' + slotMs / 1000 + ' s slot';
    svg.appendChild(title);
    svg.appendChild(line(series.requests, max, 'requests'));
    svg.appendChild(line(series.errors, max, 'errors'));
    return svg;
  }
  function server(info) {
    if (!info) return '';
    return info.name + (info.version ? ' ' + info.version : '');
  }
  function render(doc) {
    var badge = document.getElementById('ready');
    badge.textContent = doc.draining ? 'draining' : doc.ready ? 'ready' : 'not ready';
    badge.className = 'badge ' + (doc.ready ? 'ready' : 'not-ready');
    document.getElementById('reasons').textContent = doc.reasons.concat((doc.degraded || []).map(function (d) { return 'degraded: ' + d; })).join('; ');
    document.getElementById('updated').textContent = 'updated ' + doc.generatedAt;
    fill('upstreams', doc.upstreams.map(function (u) {
      var tr = row([
        cell(u.name),
        cell(server(u.serverInfo)),
        cell(u.era),
        cell(u.transport),
        cell(u.state, STATES.indexOf(u.state) >= 0 ? 'state-' + u.state : ''),
        cell(u.inFlight, 'num'),
        cell(u.calls.count, 'num'),
        cell(duration(u.calls.p50Ms), 'num'),
        cell(duration(u.calls.p99Ms), 'num'),
        cell(u.lastError, 'error'),
      ]);
      tr.dataset.upstream = u.name;
      return tr;
    }));
    var mounts = [];
    doc.mounts.forEach(function (m) {
      if (m.dialects.length === 0) mounts.push(row([cell(m.name), cell(m.url), cell(''), cell(''), cell('')]));
      m.dialects.forEach(function (d) {
        var tr = row([cell(m.name), cell(m.url), cell(d.id), cell(d.sessions, 'num'), cell(d.streams, 'num')]);
        tr.dataset.mount = m.name;
        mounts.push(tr);
      });
    });
    fill('mounts', mounts);
    fill('methods', doc.requests.methods.map(function (s) {
      var tr = row([cell(s.method), cell(sum(s.requests), 'num'), cell(sum(s.errors), 'num'), cell(spark(s, doc.requests.slotMs))]);
      tr.dataset.method = s.method;
      return tr;
    }));
    fill('refusals', doc.refusals.map(function (r) {
      return row([cell(r.at), cell(r.code), cell(r.status, 'num'), cell(r.mount), cell(r.dialect)]);
    }));
    document.body.dataset.rendered = doc.generatedAt;
  }
  function tick() {
    fetch('/status.json', { cache: 'no-store', headers: { accept: 'application/json' } })
      .then(function (res) {
        if (!res.ok) throw new Error('HTTP ' + res.status);
        return res.json();
      })
      .then(function (doc) {
        render(doc);
        document.getElementById('failure').hidden = true;
      })
      .catch(function (err) {
        var p = document.getElementById('failure');
        p.textContent = 'Cannot load /status.json: ' + err.message;
        p.hidden = false;
      })
      .then(function () {
        setTimeout(tick, POLL_MS);
      });
  }
  tick();
})();
`;
