/**
 * Gate reporters: text, json, github (workflow annotations), junit (XML for CI test tabs), markdown (a
 * CI job summary). Each says which runs and which node results failed the gate and why.
 */
import { randomBytes } from 'node:crypto';
import type { FailOn, GateNode, GateResult, GateRun } from './rules.js';
import { RULE_ORDER, failingRows, nodeLabel } from './rules.js';
import { plural as count } from '../render/plural.js';
import { printable, printableLine } from '../render/printable.js';

export const REPORTERS = ['text', 'json', 'github', 'junit', 'markdown'] as const;
export type Reporter = (typeof REPORTERS)[number];

/** Offenders listed by the reporters meant for people (json and junit list all). */
export const LISTED_FOR_PEOPLE = 1000;

/**
 * Bytes (UTF-8) of the markdown report, at most: GitHub drops a job summary over 1024 KiB whole, so
 * the table stops before it would pass this and a line says how many more.
 */
export const MARKDOWN_MAX_BYTES = 900_000;

const RULE_TEXT: Record<FailOn, [one: string, many: string]> = {
  error: ['error', 'errors'],
  'test-failed': ['test failed', 'tests failed'],
  'test-warned': ['test warned', 'tests warned'],
  skipped: ['skipped (upstream)', 'skipped (upstream)'],
  'skipped-any': ['skipped', 'skipped'],
  canceled: ['canceled', 'canceled'],
  'freshness-warned': ['freshness warned', 'freshness warned'],
  'run-error': ['run-error', 'run-errors'],
  incomplete: ['incomplete', 'incomplete'],
};

const ruleText = (rule: FailOn) => RULE_TEXT[rule][0];
const runName = (r: GateRun) => `run ${r.trace_id}${r.command ? ` (${r.command})` : ''}`;
const firstLine = (s: string | null) => (s ?? '').split('\n')[0]!;
const restLines = (s: string | null) => (s ?? '').split('\n').slice(1);
const failedRuns = (r: GateResult) => r.runs.filter((x) => x.rule);

/** The verdict in one line, without its "gate passed"/"gate FAILED" head. */
function verdictDetail(r: GateResult): string {
  const failOn = `fail-on ${r.failOn.join(',')}`;
  if (r.passed) return `${count(r.runs.length, 'run')}, ${count(r.nodeResults, 'node result')} (${failOn})`;
  const what = RULE_ORDER.filter((k) => r.counts[k]).map((k) => {
    const n = r.counts[k]!;
    return `${n} ${RULE_TEXT[k][n === 1 ? 0 : 1]}`;
  });
  return `${what.join(', ')} in ${r.runs.filter((x) => !x.passed).length} of ${count(r.runs.length, 'run')} (${failOn})`;
}

function summary(r: GateResult): string {
  return `gate ${r.passed ? 'passed' : 'FAILED'}: ${verdictDetail(r)}`;
}

/** Offenders not listed (the counts cover them): node results, and runs the markdown budget left out. */
function unlisted(r: GateResult, nodesShown = r.offenders.length, runsLeft = 0): string | undefined {
  const nodesLeft = r.offenderCount - nodesShown;
  const what = [runsLeft > 0 && count(runsLeft, 'more run'), nodesLeft > 0 && count(nodesLeft, 'more node result')].filter(Boolean);
  return what.length ? `… and ${what.join(' and ')} that ${runsLeft + nodesLeft === 1 ? 'fails' : 'fail'} the gate (--reporter json lists every one)` : undefined;
}

export function renderText(r: GateResult): string {
  const lines = [summary(r)];
  const block = (head: string, reason: string | null, tail = '') => {
    lines.push(`  ${printableLine(head)}: ${firstLine(reason)}${tail}`);
    for (const l of restLines(reason)) lines.push(`      ${l}`);
  };
  for (const run of failedRuns(r)) block(`${runName(run)}: ${run.rule}`, run.reason);
  for (const o of r.offenders) block(`${nodeLabel(o)}${o.relative_path ? ` (${o.relative_path})` : ''}: ${ruleText(o.rule!)}`, o.reason, `  [trace ${o.trace_id}]`);
  const more = unlisted(r);
  if (more) lines.push(`  ${more}`);
  return printable(lines.join('\n')) + '\n';
}

export function renderJson(r: GateResult): string {
  return JSON.stringify({
    passed: r.passed,
    fail_on: r.failOn,
    counts: r.counts,
    node_results: r.nodeResults,
    runs: r.runs,
    offenders: r.offenders,
    offenders_total: r.offenderCount,
  }, null, 2) + '\n';
}

/**
 * GitHub Actions workflow commands: data escaped as the runner requires, control characters shown as
 * text output shows them (the log renders escape sequences).
 */
function ghEscapeData(s: string): string {
  return printable(s).replaceAll('%', '%25').replaceAll('\r', '%0D').replaceAll('\n', '%0A');
}
function ghEscapeProp(s: string): string {
  return ghEscapeData(s).replaceAll(':', '%3A').replaceAll(',', '%2C');
}

export function renderGithub(r: GateResult): string {
  const lines: string[] = [];
  // A run's annotation names no file: the run as a whole failed.
  for (const run of failedRuns(r)) lines.push(`::error title=${ghEscapeProp(`${runName(run)} ${run.rule}`)}::${ghEscapeData(`${run.rule}: ${run.reason}`)}`);
  for (const o of r.offenders) {
    const level = o.rule === 'test-warned' || o.rule === 'freshness-warned' ? 'warning' : 'error';
    const props = [o.relative_path ? `file=${ghEscapeProp(o.relative_path)}` : '', `title=${ghEscapeProp(`${nodeLabel(o)} ${ruleText(o.rule!)}`)}`]
      .filter(Boolean)
      .join(',');
    lines.push(`::${level} ${props}::${ghEscapeData(`${nodeLabel(o)}: ${ruleText(o.rule!)}: ${o.reason}`)}`);
  }
  const more = unlisted(r);
  if (more) lines.push(more);
  lines.push(summary(r));
  return lines.join('\n') + '\n';
}

/**
 * A Markdown table cell: one line (`<br>` between lines; a lone CR ends a line too), control
 * characters shown as text output shows them, HTML and pipes escaped.
 */
function mdCell(s: string | null): string {
  return (s ?? '')
    .split(/\r\n?|\n/)
    .map((l) => printable(l.trim()))
    .filter(Boolean)
    .map((l) => l.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('|', '\\|'))
    .join('<br>');
}
const mdCode = (s: string | null) => (s ? `\`${printable(s.replace(/[\r\n]+/g, ' ')).replaceAll('`', "'").replaceAll('|', '\\|')}\`` : '');

/** Bytes kept for the line that says how many rows were left out. */
const MARKDOWN_TAIL_ROOM = 400;

/**
 * A CI job summary ($GITHUB_STEP_SUMMARY): the verdict in one line, then a table of what failed, as
 * many rows as fit in MARKDOWN_MAX_BYTES.
 */
export function renderMarkdown(r: GateResult): string {
  const lines = [`**runlens gate ${r.passed ? 'passed' : 'failed'}**: ${mdCell(verdictDetail(r))}`];
  if (!r.passed) {
    const commands = new Map(r.runs.map((x) => [x.trace_id, x.command]));
    const runCell = (trace: string) => `${mdCode(trace)}${commands.get(trace) ? ` ${mdCell(commands.get(trace)!)}` : ''}`;
    lines.push('', '| run | node | file | rule | reason |', '| --- | --- | --- | --- | --- |');
    const runs = failedRuns(r);
    const rows = [
      ...runs.map((run) => () => `| ${runCell(run.trace_id)} | — |  | ${run.rule} | ${mdCell(run.reason)} |`),
      ...r.offenders.map((o) => () => `| ${runCell(o.trace_id)} | ${mdCell(nodeLabel(o))} | ${mdCode(o.relative_path)} | ${ruleText(o.rule!)} | ${mdCell(o.reason)} |`),
    ];
    let bytes = Buffer.byteLength(lines.join('\n')) + MARKDOWN_TAIL_ROOM;
    let shown = 0;
    for (const row of rows) {
      const line = row();
      bytes += Buffer.byteLength(line) + 1;
      if (bytes > MARKDOWN_MAX_BYTES) break;
      lines.push(line);
      shown++;
    }
    const more = unlisted(r, Math.max(0, shown - runs.length), Math.max(0, runs.length - shown));
    if (more) lines.push('', mdCell(more));
  }
  return lines.join('\n') + '\n';
}

function xml(s: string): string {
  return s
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    // XML 1.0 forbids most control characters.
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '');
}

const seconds = (ms: number | null) => ((ms ?? 0) / 1000).toFixed(3);

/** One testcase: its XML lines and what it counts as. */
interface Case {
  lines: string[];
  kind: 'passed' | 'failure' | 'error' | 'skipped';
}

function element(kind: 'failure' | 'error', type: string, reason: string | null): string {
  return `      <${kind} message="${xml(firstLine(reason))}" type="${xml(type)}">${xml(reason ?? '')}</${kind}>`;
}

function nodeCase(n: GateNode): Case {
  const attrs = `name="${xml(nodeLabel(n))}" classname="${xml(n.resource_type ?? 'node')}"${n.relative_path ? ` file="${xml(n.relative_path)}"` : ''} time="${seconds(n.duration_ms)}"`;
  const wrap = (inner: string, kind: Case['kind']): Case => ({ lines: [`    <testcase ${attrs}>`, inner, '    </testcase>'], kind });
  // An error fails the gate as an error; every other rule as a failure of what was checked.
  if (n.rule === 'error') return wrap(element('error', n.rule, n.reason), 'error');
  if (n.rule) return wrap(element('failure', n.rule, n.reason), 'failure');
  if (n.node_outcome === 'skipped' || n.node_outcome === 'canceled') {
    const why = `${n.node_outcome}${n.skip_reason ? ` (${n.skip_reason})` : ''}${n.upstream_unique_id ? ` upstream ${n.upstream_unique_id}` : ''}`;
    return wrap(`      <skipped message="${xml(why)}"/>`, 'skipped');
  }
  // Outcomes --fail-on does not fail are shown, not counted against the gate.
  const note = n.test_outcome === 'failed' || n.test_outcome === 'warned'
    ? `${n.test_outcome}: ${failingRows(n.failing_rows)} (not in --fail-on)`
    : n.node_outcome === 'error' ? `error (not in --fail-on): ${n.error_text ?? ''}` : undefined;
  return note ? wrap(`      <system-out>${xml(note)}</system-out>`, 'passed') : { lines: [`    <testcase ${attrs}/>`], kind: 'passed' };
}

function runCase(run: GateRun): Case {
  const attrs = `name="${xml(runName(run))}" classname="run" time="${seconds(run.duration_ms)}"`;
  if (!run.rule) return { lines: [`    <testcase ${attrs}/>`], kind: 'passed' };
  return { lines: [`    <testcase ${attrs}>`, element('error', run.rule, run.reason), '    </testcase>'], kind: 'error' };
}

function tally(cases: Case[]): string {
  const n = (k: Case['kind']) => cases.filter((c) => c.kind === k).length;
  return `tests="${cases.length}" failures="${n('failure')}" errors="${n('error')}" skipped="${n('skipped')}"`;
}

/**
 * JUnit XML: one testsuite per run holding a testcase for the run itself, one per test and one per
 * other node that failed the gate. The counts are those of the testcases written.
 */
export function renderJunit(r: GateResult): string {
  const byRun = new Map<string, GateNode[]>();
  for (const n of r.tests ?? []) {
    const list = byRun.get(n.trace_id);
    if (list) list.push(n);
    else byRun.set(n.trace_id, [n]);
  }
  const suites = r.runs.map((run) => {
    const nodes = byRun.get(run.trace_id) ?? [];
    return { run, cases: [runCase(run), ...nodes.map(nodeCase)], time: seconds(run.duration_ms) };
  });
  const out = ['<?xml version="1.0" encoding="UTF-8"?>', `<testsuites name="runlens gate" ${tally(suites.flatMap((s) => s.cases))}>`];
  for (const s of suites) {
    out.push(`  <testsuite name="${xml(`${s.run.command ?? 'run'} ${s.run.trace_id}`)}" ${tally(s.cases)} time="${s.time}">`);
    for (const c of s.cases) out.push(...c.lines);
    out.push('  </testsuite>');
  }
  out.push('</testsuites>');
  return out.join('\n') + '\n';
}

/**
 * When the gate cannot decide (its input cannot be read: exit 2), the reporters a CI job publishes
 * whatever the verdict (junit, markdown) say so and why, rather than leave an empty file; the others
 * write nothing (the message is on stderr).
 */
export function renderGateError(message: string, reporter: Reporter): string | undefined {
  if (reporter === 'markdown') return `**runlens gate could not decide** (exit 2): ${mdCell(message)}\n`;
  if (reporter !== 'junit') return undefined;
  const counts = 'tests="1" failures="0" errors="1" skipped="0"';
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="runlens gate" ${counts}>`,
    `  <testsuite name="runlens gate" ${counts} time="0.000">`,
    '    <testcase name="the gate\'s input" classname="runlens" time="0.000">',
    element('error', 'input', message),
    '    </testcase>',
    '  </testsuite>',
    '</testsuites>',
  ].join('\n') + '\n';
}

/**
 * A GitHub Actions runner obeys workflow commands in a step's log: `::add-mask::x` at a line's start
 * (after spaces), `##[cmd]` anywhere in a line. The text reporter's reasons are the run's own text, so
 * in a GitHub Actions step its output goes between GitHub's stop-commands pair, with a token random
 * per run that no reason can guess. The github reporter escapes its data itself; json, junit and
 * markdown are files (the pair would make them invalid).
 */
export function forGithubActions(out: string, reporter: Reporter): string {
  if (reporter !== 'text') return out;
  const token = randomBytes(16).toString('hex');
  return `::stop-commands::${token}\n${out}::${token}::\n`;
}

export function renderGate(r: GateResult, reporter: Reporter): string {
  switch (reporter) {
    case 'json':
      return renderJson(r);
    case 'github':
      return renderGithub(r);
    case 'junit':
      return renderJunit(r);
    case 'markdown':
      return renderMarkdown(r);
    default:
      return renderText(r);
  }
}
