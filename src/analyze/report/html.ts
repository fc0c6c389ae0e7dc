/**
 * The report as one self-contained HTML file: every style, script and chart inline, and a content
 * security policy that forbids any request, so it opens the same from file://, an attachment or a
 * CI artifact, offline. Tables and small charts are written here as HTML and SVG; the Gantt chart
 * is drawn by the inline script (client.ts) on a canvas from the evaluations' JSON.
 */
import { formatDuration } from '../../render/tree-text.js';
import type { Row } from '../../store/db.js';
import { GANTT_SCRIPT } from './client.js';
import { CRITICAL_LINKS_LISTED, type ReportData, type ReportHistory } from './data.js';
import { plural } from '../../render/plural.js';
import { phaseLabels, phaseTimeText } from '../critical-path.js';

const esc = (v: unknown): string =>
  String(v ?? '').replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');
const ms = (v: unknown): string => (typeof v === 'number' ? formatDuration(v) : '');
const firstLine = (s: unknown): string => String(s ?? '').split('\n')[0]!;

/** JSON inside a <script> element: nothing in it may close the element or open a comment. */
function scriptJson(json: string): string {
  return json.replaceAll('<', '\\u003c').replaceAll('\u2028', '\\u2028').replaceAll('\u2029', '\\u2029');
}

function table(columns: [key: string, title: string, cell?: (r: Row) => string][], rows: Row[], cls = ''): string {
  if (rows.length === 0) return '<p class="none">none</p>';
  const head = columns.map(([, t]) => `<th>${esc(t)}</th>`).join('');
  const body = rows
    .map((r) => `<tr>${columns.map(([k, , cell]) => `<td>${cell ? cell(r) : esc(r[k])}</td>`).join('')}</tr>`)
    .join('\n');
  return `<table class="${cls}"><thead><tr>${head}</tr></thead><tbody>\n${body}\n</tbody></table>`;
}

function outcomeText(r: Row): string {
  const bits = [r.node_outcome, r.skip_reason, r.test_outcome && r.test_outcome !== 'passed' ? `test ${r.test_outcome}` : null].filter(Boolean);
  return esc(bits.join(' · '));
}

function header(d: ReportData): string {
  const r = d.run;
  const counts: [string, number, string][] = [
    ['nodes', r.nodes, ''], ['success', r.success, 'ok'], ['error', r.error, r.error ? 'bad' : ''], ['skipped', r.skipped, ''],
    ['canceled', r.canceled, r.canceled ? 'bad' : ''], ['tests passed', r.tests_passed, 'ok'], ['tests warned', r.tests_warned, r.tests_warned ? 'warn' : ''],
    ['tests failed', r.tests_failed, r.tests_failed ? 'bad' : ''],
  ];
  return `<header>
<h1>runlens report: <span id="run-command">${esc(r.raw_command ?? r.command ?? 'run')}</span></h1>
<p class="meta">trace <code id="run-trace">${esc(r.trace_id)}</code> · invocation <code>${esc(r.invocation_id)}</code> · started ${esc(r.started_at)}
 · ${esc(r.duration_s === null ? '' : formatDuration(r.duration_s * 1000) + (r.duration_s < 0 ? ' (ends before it starts)' : ''))}${r.ended ? '' : ' · <b>never ended</b>'} · engine ${esc(r.engine_version ?? '?')}</p>
<div id="verdict" class="verdict ${d.gate.passed ? 'passed' : 'failed'}" data-passed="${d.gate.passed}">
<div class="badge">${d.gate.passed ? 'PASSED' : 'FAILED'}</div>
<div><pre id="gate-summary">${esc(d.gate.lines[0] ?? '')}</pre>${offenders(d.gate.lines.slice(1), d.gate.offenders)}</div>
</div>
<ul id="counts" class="counts">${counts.map(([k, v, c]) => `<li class="${c}" data-count="${esc(k)}"><b>${v}</b> ${esc(k)}</li>`).join('')}</ul>
</header>`;
}

/** The gate's lines after its summary: shown when few, folded when many. */
function offenders(lines: string[], count: number): string {
  if (lines.length === 0) return '';
  const pre = `<pre class="offenders">${lines.map(esc).join('\n')}</pre>`;
  return lines.length <= 8 ? pre : `<details><summary>${plural(count, 'offender')}: the gate's report</summary>${pre}</details>`;
}

function gantt(d: ReportData): string {
  return `<section id="timeline">
<h2>Timeline</h2>
<p class="hint">Node evaluations by start time, one lane per worker within each phase (an evaluation takes the lane free longest when it starts).
Scroll to zoom, drag to pan, double-click to reset; hover a bar for its details. <span class="crit-key"></span> on the critical path.</p>
<div class="toolbar"><button type="button" data-zoom="in">zoom in</button><button type="button" data-zoom="out">zoom out</button><button type="button" data-zoom="reset">reset</button>
<label><input type="checkbox" id="only-critical"> dim all but the critical path</label><span id="legend"></span></div>
<div id="gantt-wrap"><canvas id="gantt" aria-label="Gantt chart of node evaluations"></canvas><div id="tooltip" role="tooltip" hidden></div></div>
<script type="application/json" id="gantt-data">${scriptJson(d.gantt)}</script>
</section>`;
}

function critical(d: ReportData): string {
  const labels = phaseLabels(d.critical);
  const phases = d.critical
    .map((p, i) => {
      const more = p.links > p.longest.length ? ` (the ${p.longest.length} longest of ${p.links} links; the chart marks them all)` : '';
      return `<h3>phase ${esc(labels[i]!)}: ${phaseTimeText(p.phase_ms)}</h3>
<p>${p.links} node(s) on the path: ${ms(p.work_ms)} working, ${ms(p.wait_ms)} waiting${esc(more)}</p>
${table([
  ['position', '#'], ['unique_id', 'node'], ['outcome', 'outcome', outcomeText],
  ['start_ms', 'start', (r) => ms(r.start_ms)], ['wait_ms', 'wait before', (r) => ms(r.wait_ms)], ['duration_ms', 'duration', (r) => ms(r.duration_ms)],
], p.longest, 'critical')}`;
    })
    .join('\n');
  return `<section id="critical-path">
<h2>Critical path</h2>
<p class="hint">From the spans: per phase, walked back from the phase's end through the evaluation that ended last, then the one that ended last before it started, and so on. Up to ${CRITICAL_LINKS_LISTED} links per phase are listed.</p>
${phases || '<p class="none">no node evaluations under a phase</p>'}
</section>`;
}

function failures(d: ReportData): string {
  const chains = new Map<string, Row[]>();
  for (const c of d.skip_chains) {
    const k = String(c.root_cause ?? '(upstream not recorded)');
    if (!chains.has(k)) chains.set(k, []);
    chains.get(k)!.push(c);
  }
  const chainHtml = [...chains]
    .map(([root, rows]) => `<details><summary><code>${esc(root)}</code> (${esc(rows[0]!.root_cause_outcome ?? '')}): ${plural(rows.length, 'node')} skipped</summary>
<ul>${rows.map((r) => `<li><code>${esc(r.unique_id)}</code>${r.chain ? ` ← ${esc(r.chain)}` : ''}</li>`).join('')}</ul></details>`)
    .join('\n');
  return `<section id="failures">
<h2>Failures</h2>
<h3>Errors</h3>
${table([['unique_id', 'node'], ['phase', 'phase'], ['file', 'file'], ['error_text', 'error', (r) => `<pre class="err">${esc(r.error_text ?? '')}</pre>`]], d.errors, 'errors')}
<h3>Failed tests</h3>
${table([['unique_id', 'test'], ['failing_rows', 'failing rows'], ['file', 'file'], ['duration_ms', 'duration', (r) => ms(r.duration_ms)]], d.failed_tests, 'failed-tests')}
<h3>Skipped because of an upstream failure</h3>
${chainHtml || '<p class="none">none</p>'}
</section>`;
}

function slowest(d: ReportData): string {
  return `<section id="slowest">
<h2>Slowest nodes</h2>
${table([['rank', '#'], ['unique_id', 'node'], ['resource_type', 'type'], ['node_outcome', 'outcome'], ['duration_ms', 'duration', (r) => ms(r.duration_ms)]], d.slowest, 'slowest')}
</section>`;
}

/** A sparkline's glyphs (▁..█, heights 1..8) as bars. */
function sparkSvg(trend: string): string {
  const levels = [...trend].map((ch) => Math.max(1, '▁▂▃▄▅▆▇█'.indexOf(ch) + 1));
  const w = 4;
  const bars = levels.map((l, i) => `<rect x="${i * w}" y="${16 - l * 2}" width="${w - 1}" height="${l * 2}"/>`).join('');
  return `<svg class="spark" width="${levels.length * w}" height="16" viewBox="0 0 ${levels.length * w} 16" role="img" aria-label="${esc(trend)}">${bars}</svg>`;
}

/** A flaky test's outcomes, oldest first (✓ passed, ! warned, ✗ failed, E error), as coloured cells. */
function stripSvg(history: string): string {
  const cls: Record<string, string> = { '✓': 'ok', '!': 'warn', '✗': 'bad', E: 'err' };
  const cells = [...history].map((ch, i) => `<rect class="${cls[ch] ?? ''}" x="${i * 7}" y="0" width="6" height="12"><title>${esc(ch)}</title></rect>`).join('');
  return `<svg class="strip" width="${[...history].length * 7}" height="12" role="img" aria-label="${esc(history)}">${cells}</svg>`;
}

function runsChart(h: ReportHistory): string {
  // (reduce, not Math.max(...): a spread of every run can overflow the stack)
  const max = h.runs.reduce((m, r) => Math.max(m, r.duration_s ?? 0), 0.001);
  const w = 12;
  const bars = h.runs
    .map((r, i) => {
      const hgt = Math.max(1, Math.round(((r.duration_s ?? 0) / max) * 60));
      return `<rect class="${r.failed ? 'bad' : 'ok'}${r.current ? ' current' : ''}" x="${i * w}" y="${60 - hgt}" width="${w - 2}" height="${hgt}"><title>${esc(r.started_at)} ${esc(r.trace_id)}: ${esc(formatDuration((r.duration_s ?? 0) * 1000))}${r.failed ? ' (failed)' : ''}</title></rect>`;
    })
    .join('');
  return `<svg class="runs-chart" width="${h.runs.length * w}" height="60" role="img" aria-label="run durations">${bars}</svg>`;
}

/** What a history table leaves out: `the first 15 of 36 nodes (order)`, or nothing. */
function listed(rows: number, total: number, noun: string, order: string): string {
  return total > rows ? `<p class="hint">${esc(`the first ${rows} of ${total} ${noun} (${order})`)}</p>\n` : '';
}

function history(h: ReportHistory | null): string {
  if (!h) return '';
  return `<section id="history">
<h2>History: the ${h.runs.length} runs of ${esc(h.command ?? 'the same command')} up to this one</h2>
<p class="hint">Run durations, oldest first (red: failed; outlined: this report's run).</p>
${runsChart(h)}
<h3>Node trends</h3>
${listed(h.trends.length, h.totals.trends, 'nodes', 'regressions first, then by last / median')}${table([
  ['unique_id', 'node'], ['runs_seen', 'runs'], ['median_ms', 'median', (r) => ms(r.median_ms)], ['p95_ms', 'p95', (r) => ms(r.p95_ms)],
  ['last_ms', 'last', (r) => ms(r.last_ms)], ['ratio', 'last / median', (r) => (r.regressed ? `<b class="bad">${esc(r.ratio)}×</b>` : `${esc(r.ratio)}×`)],
  ['trend', 'trend', (r) => sparkSvg(String(r.trend ?? ''))],
], h.trends, 'trends')}
<h3>Flaky tests</h3>
${listed(h.flaky.length, h.totals.flaky, 'tests', 'most flips first')}${table([
  ['unique_id', 'test'], ['flips', 'flips'], ['failure_pct', 'not passed %'], ['last_outcome', 'last'], ['last_changed_at', 'last change'],
  ['history', 'outcomes', (r) => stripSvg(String(r.history ?? ''))],
], h.flaky, 'flaky')}
<h3>Failure history</h3>
${listed(h.failures.length, h.totals.failures, 'nodes', 'most failures first')}${table([
  ['unique_id', 'node'], ['errors', 'errors'], ['tests_failed', 'tests failed'], ['failure_pct', 'failed %'], ['last_failed_at', 'last failed'],
  ['last_failure', 'last failure', (r) => `<span class="wrap">${esc(firstLine(r.last_failure))}</span>`],
], h.failures, 'failure-history')}
</section>`;
}

const STYLE = `
:root{--ok:#2e7d32;--bad:#c62828;--warn:#ef8f00;--muted:#666;font-family:system-ui,-apple-system,"Segoe UI",sans-serif;font-size:14px}
body{margin:0 auto;max-width:1400px;padding:16px 24px;color:#222}
h1{font-size:20px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}h3{font-size:14px;margin:16px 0 6px}
.meta,.hint{color:var(--muted);margin:4px 0}code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}
.verdict{display:flex;gap:12px;align-items:flex-start;margin:10px 0;padding:8px 12px;border-radius:6px}
.verdict.passed{background:#e8f5e9}.verdict.failed{background:#ffebee}
.badge{font-weight:700;font-size:16px;padding:2px 10px;border-radius:4px;color:#fff}.passed .badge{background:var(--ok)}.failed .badge{background:var(--bad)}
.verdict pre{margin:0;white-space:pre-wrap;font-size:12px}
.counts{display:flex;flex-wrap:wrap;gap:8px;list-style:none;padding:0;margin:8px 0}.counts li{background:#f5f5f5;padding:4px 10px;border-radius:4px}
.counts li.ok b{color:var(--ok)}.counts li.bad b{color:var(--bad)}.counts li.warn b{color:var(--warn)}
table{border-collapse:collapse;margin:4px 0 8px;font-size:12px}th,td{border-bottom:1px solid #eee;padding:3px 8px;text-align:left;vertical-align:top;white-space:nowrap}.wrap{white-space:normal}
td{max-width:60ch;white-space:normal;overflow-wrap:anywhere}h1,.meta,pre{overflow-wrap:anywhere}
th{background:#fafafa}pre.err{margin:0;white-space:pre-wrap;max-width:700px;color:var(--bad)}.none{color:var(--muted)}
.toolbar{display:flex;gap:8px;align-items:center;flex-wrap:wrap;margin:6px 0}
#legend{display:flex;gap:10px;flex-wrap:wrap;font-size:12px}#legend i{display:inline-block;width:10px;height:10px;margin-right:3px;vertical-align:-1px}
#gantt-wrap{position:relative;border:1px solid #ddd}#gantt{display:block;width:100%;cursor:grab}
#tooltip{position:absolute;pointer-events:none;background:#222;color:#fff;padding:6px 8px;border-radius:4px;font-size:12px;max-width:520px;white-space:pre-wrap;z-index:2}
.crit-key{display:inline-block;width:16px;height:8px;border:2px solid #000;vertical-align:-1px}
svg.spark rect{fill:#5c6bc0}svg.strip rect{fill:#ccc}svg.strip .ok,svg.runs-chart .ok{fill:#81c784}svg.strip .warn{fill:#ffb74d}svg.strip .bad,svg.runs-chart .bad,svg.strip .err{fill:#e57373}
svg.runs-chart .current{stroke:#000;stroke-width:2}b.bad{color:var(--bad)}details{margin:2px 0}
`;

export function renderReportHtml(d: ReportData): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>runlens report: ${esc(d.run.command ?? 'run')} ${esc(d.run.trace_id)}</title>
<style>${STYLE}</style>
</head>
<body>
${header(d)}
${gantt(d)}
${critical(d)}
${failures(d)}
${slowest(d)}
${history(d.history)}
<footer class="hint">Written by runlens at ${esc(d.generated_at)} from ${esc(d.run.trace_id)}.</footer>
<script>${GANTT_SCRIPT}</script>
</body>
</html>
`;
}
