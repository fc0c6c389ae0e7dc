/**
 * The report's one script, inlined into the HTML: it reads the evaluations' JSON (data.ts, GANTT
 * columns), puts each phase's evaluations into lanes (an evaluation takes the lane that has been free
 * longest when it starts, or a new one: how a pool of worker threads fills), and draws them on a
 * canvas: only what is in view, so a 100k-span run draws in milliseconds. Wheel zooms, drag pans,
 * double-click resets; hovering a bar shows its details. window.runlensGantt lets a page script (or
 * a test) find a node's bar and list the critical evaluations.
 *
 * Plain ES2017 without template literals: it sits inside this module's template string.
 */
export const GANTT_SCRIPT = String.raw`
(function () {
  'use strict';
  var D = JSON.parse(document.getElementById('gantt-data').textContent || '{}');
  var N = (D.n || []).length;
  var canvas = document.getElementById('gantt');
  var tip = document.getElementById('tooltip');
  var ctx = canvas.getContext('2d');
  var COLORS = { 'success': '#66bb6a', 'error': '#b71c1c', 'test failed': '#e53935', 'test warned': '#ffa726', 'reused (cached)': '#90caf9',
    'skipped: upstream': '#9e9e9e', 'canceled': '#7e57c2', 'not ended': '#fdd835' };
  function colorOf(cat) { return COLORS[cat] || (cat.indexOf('skipped') === 0 ? '#cfd8dc' : '#607d8b'); }
  var catColor = (D.categories || []).map(colorOf);
  var AXIS = 22, BAND = 16, LANE = 12, BAR = 9, GAP = 6;

  // Lanes, per phase (the data is in phase order, then start order).
  var lane = new Int32Array(N);
  var phaseLanes = [];
  var lanes = []; // per phase: per lane, evaluation indexes in start order
  var i = 0;
  for (var ph = 0; ph < (D.phases || []).length; ph++) {
    var heap = []; // [freeAt, lane] min-heap
    var mine = [];
    for (; i < N && D.p[i] === ph; i++) {
      var s = D.s[i], l;
      if (heap.length && heap[0][0] <= s) { l = heap[0][1]; heap[0] = [s + D.d[i], l]; down(heap, 0); }
      else { l = mine.length; mine.push([]); push(heap, [s + D.d[i], l]); }
      lane[i] = l;
      mine[l].push(i);
    }
    lanes.push(mine);
    phaseLanes.push(mine.length);
  }
  function less(a, b) { return a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]); }
  function push(h, x) { h.push(x); var k = h.length - 1; while (k > 0) { var p = (k - 1) >> 1; if (!less(h[k], h[p])) break; var t = h[k]; h[k] = h[p]; h[p] = t; k = p; } }
  function down(h, k) {
    for (;;) { var a = 2 * k + 1, b = a + 1, m = k;
      if (a < h.length && less(h[a], h[m])) m = a; if (b < h.length && less(h[b], h[m])) m = b;
      if (m === k) return; var t = h[k]; h[k] = h[m]; h[m] = t; k = m; }
  }
  // The top of each phase's band, in CSS pixels.
  var phaseTop = [], y = AXIS;
  for (var q = 0; q < phaseLanes.length; q++) { phaseTop.push(y); y += BAND + phaseLanes[q] * LANE + GAP; }
  var height = Math.max(y, AXIS + 20);

  var end = D.run_ms || 0;
  for (var j = 0; j < N; j++) if (D.s[j] + D.d[j] > end) end = D.s[j] + D.d[j];
  var full = [0, Math.max(end, 0.001)];
  var view = full.slice();
  var onlyCritical = false;
  var width = 0;

  // as formatDuration (render/tree-text.ts), which this page cannot import
  function fmt(ms) {
    if (ms === 0) return '0';
    if (ms < 0) return '-' + fmt(-ms);
    if (ms < 0.001) return '<1µs';
    if (ms < 1) return (ms * 1000).toFixed(0) + 'µs';
    if (ms < 1000) return ms.toFixed(ms < 10 ? 1 : 0) + 'ms';
    if (ms < 60000) return (ms / 1000).toFixed(2) + 's';
    var m = Math.floor(ms / 60000);
    return m + 'm' + String(Math.round((ms % 60000) / 1000)).padStart(2, '0') + 's';
  }
  function X(t) { return (t - view[0]) / (view[1] - view[0]) * width; }
  function T(x) { return view[0] + x / width * (view[1] - view[0]); }

  function resize() {
    var dpr = window.devicePixelRatio || 1;
    width = canvas.clientWidth || 800;
    canvas.style.height = height + 'px';
    canvas.width = Math.round(width * dpr);
    canvas.height = Math.round(height * dpr);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  }

  function axis() {
    var span = view[1] - view[0];
    var step = Math.pow(10, Math.floor(Math.log10(span / 8)));
    if (span / step > 40) step *= 5; else if (span / step > 16) step *= 2;
    ctx.fillStyle = '#555'; ctx.strokeStyle = '#e0e0e0'; ctx.font = '11px sans-serif'; ctx.textBaseline = 'middle';
    for (var t = Math.ceil(view[0] / step) * step; t <= view[1]; t += step) {
      var x = Math.round(X(t)) + 0.5;
      ctx.beginPath(); ctx.moveTo(x, AXIS - 4); ctx.lineTo(x, height); ctx.stroke();
      ctx.fillText(fmt(t), x + 3, 10);
    }
  }

  // The first evaluation of a lane that ends after t (a lane's evaluations do not overlap).
  function firstAfter(list, t) {
    var lo = 0, hi = list.length;
    while (lo < hi) { var mid = (lo + hi) >> 1, e = list[mid]; if (D.s[e] + D.d[e] < t) lo = mid + 1; else hi = mid; }
    return lo;
  }

  function draw() {
    ctx.clearRect(0, 0, width, height);
    axis();
    for (var p = 0; p < lanes.length; p++) {
      var top = phaseTop[p];
      ctx.fillStyle = '#f3f3f3'; ctx.fillRect(0, top, width, BAND - 2);
      ctx.fillStyle = '#333'; ctx.font = 'bold 11px sans-serif'; ctx.textBaseline = 'middle';
      ctx.fillText(D.phases[p] + ' (' + phaseLanes[p] + ' lane' + (phaseLanes[p] === 1 ? '' : 's') + ')', 4, top + BAND / 2 - 1);
      ctx.font = '10px sans-serif';
      for (var l = 0; l < lanes[p].length; l++) {
        var list = lanes[p][l], yy = top + BAND + l * LANE;
        for (var k = firstAfter(list, view[0]); k < list.length; k++) {
          var e = list[k];
          if (D.s[e] > view[1]) break;
          var x0 = X(D.s[e]), x1 = X(D.s[e] + D.d[e]);
          var w = Math.max(1, x1 - x0);
          var crit = D.k[e] > 0;
          ctx.globalAlpha = onlyCritical && !crit ? 0.15 : 1;
          ctx.fillStyle = catColor[D.c[e]];
          ctx.fillRect(x0, yy, w, BAR);
          if (crit) { ctx.strokeStyle = '#000'; ctx.lineWidth = 2; ctx.strokeRect(x0 + 1, yy + 1, Math.max(0, w - 2), BAR - 2); ctx.lineWidth = 1; }
          if (w > 60) {
            ctx.save(); ctx.beginPath(); ctx.rect(x0, yy, w, BAR); ctx.clip();
            ctx.fillStyle = '#111'; ctx.fillText(shortName(D.names[D.n[e]]), x0 + 3, yy + BAR / 2);
            ctx.restore();
          }
        }
      }
    }
    ctx.globalAlpha = 1;
  }
  function shortName(id) { var parts = id.split('.'); return parts.length > 2 ? parts.slice(2).join('.') : id; }

  var pending = false;
  function redraw() { if (pending) return; pending = true; requestAnimationFrame(function () { pending = false; draw(); }); }

  function clampView(a, b) {
    var span = Math.min(Math.max(b - a, 0.001), (full[1] - full[0]) * 1.5);
    if (a < full[0] - span * 0.25) a = full[0] - span * 0.25;
    if (a + span > full[1] + span * 0.25) a = full[1] + span * 0.25 - span;
    view = [a, a + span];
  }
  function zoomAt(x, factor) { var t = T(x); clampView(t - (t - view[0]) * factor, t + (view[1] - t) * factor); redraw(); }

  // The evaluation under a point (CSS pixels in the canvas), or -1.
  function hit(px, py) {
    for (var p = 0; p < lanes.length; p++) {
      var top = phaseTop[p] + BAND;
      if (py < top || py >= top + lanes[p].length * LANE) continue;
      var list = lanes[p][Math.floor((py - top) / LANE)];
      var slack = 3 * (view[1] - view[0]) / width, t = T(px);
      for (var k = firstAfter(list, t - slack); k < list.length && D.s[list[k]] <= t + slack; k++) return list[k];
    }
    return -1;
  }

  function describe(e) {
    var lines = [D.names[D.n[e]], 'phase ' + D.phases[D.p[e]] + ' · ' + D.categories[D.c[e]],
      'start +' + fmt(D.s[e]) + ' · duration ' + fmt(D.d[e]) + ' · end +' + fmt(D.s[e] + D.d[e])];
    if (D.u[e] >= 0) lines.push('upstream: ' + D.names[D.u[e]]);
    if (D.f[e] !== null && D.f[e] !== undefined && D.f[e] !== 0) lines.push('failing rows: ' + D.f[e]);
    if (D.k[e] > 0) lines.push('critical path: link ' + D.k[e] + ' of its phase');
    var err = errors[e];
    if (err) lines.push('error: ' + (err.length > 800 ? err.slice(0, 800) + '…' : err));
    return lines.join('\n');
  }
  var errors = {};
  (D.errors || []).forEach(function (x) { errors[x.i] = x.t; });

  var drag = null;
  canvas.addEventListener('wheel', function (ev) { ev.preventDefault(); zoomAt(ev.offsetX, Math.exp(ev.deltaY * 0.002)); }, { passive: false });
  canvas.addEventListener('mousedown', function (ev) { drag = { x: ev.clientX, view: view.slice() }; canvas.style.cursor = 'grabbing'; });
  window.addEventListener('mouseup', function () { drag = null; canvas.style.cursor = 'grab'; });
  window.addEventListener('mousemove', function (ev) {
    if (!drag) return;
    var dt = (ev.clientX - drag.x) / width * (drag.view[1] - drag.view[0]);
    clampView(drag.view[0] - dt, drag.view[1] - dt); redraw();
  });
  canvas.addEventListener('dblclick', function () { view = full.slice(); redraw(); });
  canvas.addEventListener('mousemove', function (ev) {
    var e = drag ? -1 : hit(ev.offsetX, ev.offsetY);
    if (e < 0) { tip.hidden = true; return; }
    tip.textContent = describe(e);
    tip.hidden = false;
    var left = Math.min(ev.offsetX + 14, Math.max(0, width - 380));
    tip.style.left = left + 'px'; tip.style.top = (ev.offsetY + 14) + 'px';
  });
  canvas.addEventListener('mouseleave', function () { tip.hidden = true; });
  document.querySelectorAll('[data-zoom]').forEach(function (b) {
    b.addEventListener('click', function () {
      var z = b.getAttribute('data-zoom');
      if (z === 'reset') { view = full.slice(); redraw(); } else zoomAt(width / 2, z === 'in' ? 0.5 : 2);
    });
  });
  document.getElementById('only-critical').addEventListener('change', function (ev) { onlyCritical = ev.target.checked; redraw(); });
  var legend = document.getElementById('legend');
  (D.categories || []).forEach(function (c, n) {
    var item = document.createElement('span'), sw = document.createElement('i');
    sw.style.background = catColor[n];
    item.appendChild(sw); item.appendChild(document.createTextNode(c));
    legend.appendChild(item);
  });
  window.addEventListener('resize', function () { resize(); redraw(); });

  window.runlensGantt = {
    bars: N,
    lanes: phaseLanes.slice(),
    /** the centre of a node's bar in a phase, in page coordinates (zooming out to show it), or null */
    locate: function (uniqueId, phase) {
      for (var e = 0; e < N; e++) {
        if (D.names[D.n[e]] !== uniqueId || (phase && D.phases[D.p[e]] !== phase)) continue;
        view = full.slice(); draw();
        var r = canvas.getBoundingClientRect();
        var x0 = Math.max(0, X(D.s[e])), x1 = Math.max(x0 + 1, X(D.s[e] + D.d[e]));
        return { x: r.left + window.scrollX + (x0 + x1) / 2, y: r.top + window.scrollY + phaseTop[D.p[e]] + BAND + lane[e] * LANE + BAR / 2 };
      }
      return null;
    },
    /** the critical evaluations as "phase unique_id", in phase and path order */
    critical: function () {
      var out = [];
      for (var e = 0; e < N; e++) if (D.k[e] > 0) out.push([D.p[e], D.k[e], D.phases[D.p[e]] + ' ' + D.names[D.n[e]]]);
      out.sort(function (a, b) { return a[0] - b[0] || a[1] - b[1]; });
      return out.map(function (x) { return x[2]; });
    }
  };

  resize();
  draw();
  document.body.setAttribute('data-drawn', 'true');
  if (window.performance && performance.mark) performance.mark('runlens-drawn');
})();
`;
