/** Gate reporters: text, json, github (workflow annotations), junit (XML for CI test tabs). */
import type { GateNode, GateResult } from './rules.js';

export const REPORTERS = ['text', 'json', 'github', 'junit'] as const;
export type Reporter = (typeof REPORTERS)[number];

const RULE_TEXT: Record<string, string> = {
  'test-failed': 'test failed',
  'test-warned': 'test warned',
  error: 'error',
  skipped: 'skipped',
  canceled: 'canceled',
};

function firstLine(s: string | null): string {
  return (s ?? '').split('\n')[0]!.trim();
}

function describe(n: GateNode & { rule: string }): string {
  const bits = [RULE_TEXT[n.rule] ?? n.rule];
  if (n.failing_rows) bits.push(`${n.failing_rows} failing row(s)`);
  if (n.skip_reason) bits.push(`skip reason ${n.skip_reason}${n.upstream_unique_id ? ` (upstream ${n.upstream_unique_id})` : ''}`);
  const err = firstLine(n.error_text);
  if (err) bits.push(err);
  return bits.join(': ');
}

function summary(r: GateResult): string {
  const counts = new Map<string, number>();
  for (const o of r.offenders) counts.set(o.rule, (counts.get(o.rule) ?? 0) + 1);
  const what = [...counts].map(([k, v]) => `${v} ${RULE_TEXT[k]}`).join(', ');
  return r.passed
    ? `gate passed: ${r.runs.length} run(s), ${r.nodes.length} node result(s), fail-on ${r.failOn.join(',')}`
    : `gate FAILED: ${what} in ${new Set(r.offenders.map((o) => o.trace_id)).size} of ${r.runs.length} run(s) (fail-on ${r.failOn.join(',')})`;
}

export function renderText(r: GateResult): string {
  const lines = [summary(r)];
  for (const o of r.offenders) lines.push(`  ${o.unique_id}${o.relative_path ? ` (${o.relative_path})` : ''}: ${describe(o)}  [trace ${o.trace_id}]`);
  return lines.join('\n') + '\n';
}

export function renderJson(r: GateResult): string {
  return JSON.stringify({ passed: r.passed, fail_on: r.failOn, runs: r.runs, offenders: r.offenders }, null, 2) + '\n';
}

/** GitHub Actions workflow commands: data escaped as the runner requires. */
function ghEscapeData(s: string): string {
  return s.replaceAll('%', '%25').replaceAll('\r', '%0D').replaceAll('\n', '%0A');
}
function ghEscapeProp(s: string): string {
  return ghEscapeData(s).replaceAll(':', '%3A').replaceAll(',', '%2C');
}

export function renderGithub(r: GateResult): string {
  const lines = r.offenders.map((o) => {
    const level = o.rule === 'test-warned' ? 'warning' : 'error';
    const props = [o.relative_path ? `file=${ghEscapeProp(o.relative_path)}` : '', `title=${ghEscapeProp(`${o.unique_id} ${RULE_TEXT[o.rule]}`)}`]
      .filter(Boolean)
      .join(',');
    return `::${level} ${props}::${ghEscapeData(`${o.unique_id}: ${describe(o)}`)}`;
  });
  lines.push(summary(r));
  return lines.join('\n') + '\n';
}

function xml(s: string): string {
  return s
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    // XML 1.0 forbids most control characters.
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F]/g, '');
}

/** JUnit XML: one testsuite per run, one testcase per test node. */
export function renderJunit(r: GateResult): string {
  const out = ['<?xml version="1.0" encoding="UTF-8"?>'];
  const tests = r.nodes.filter((n) => n.resource_type === 'test' || n.resource_type === 'unit_test');
  const byRun = new Map<string, GateNode[]>();
  for (const n of tests) byRun.set(n.trace_id, [...(byRun.get(n.trace_id) ?? []), n]);
  const failures = (n: GateNode) => n.test_outcome === 'failed';
  const errors = (n: GateNode) => n.node_outcome === 'error';
  const skipped = (n: GateNode) => n.node_outcome === 'skipped' || n.node_outcome === 'canceled';
  out.push(
    `<testsuites name="runlens gate" tests="${tests.length}" failures="${tests.filter(failures).length}" errors="${tests.filter(errors).length}" skipped="${tests.filter(skipped).length}">`,
  );
  for (const run of r.runs) {
    const ts = byRun.get(run.trace_id) ?? [];
    const time = ts.reduce((a, n) => a + (n.duration_ms ?? 0), 0) / 1000;
    out.push(
      `  <testsuite name="${xml(`${run.command ?? 'run'} ${run.trace_id}`)}" tests="${ts.length}" failures="${ts.filter(failures).length}" errors="${ts.filter(errors).length}" skipped="${ts.filter(skipped).length}" time="${time.toFixed(3)}">`,
    );
    for (const n of ts) {
      const attrs = `name="${xml(n.unique_id)}" classname="${xml(n.resource_type ?? 'test')}"${n.relative_path ? ` file="${xml(n.relative_path)}"` : ''} time="${((n.duration_ms ?? 0) / 1000).toFixed(3)}"`;
      if (failures(n)) {
        out.push(`    <testcase ${attrs}>`, `      <failure message="${xml(`${n.failing_rows ?? 0} failing row(s)`)}" type="test_failed"/>`, '    </testcase>');
      } else if (errors(n)) {
        out.push(`    <testcase ${attrs}>`, `      <error message="${xml(firstLine(n.error_text) || 'node error')}" type="error">${xml(n.error_text ?? '')}</error>`, '    </testcase>');
      } else if (skipped(n)) {
        out.push(`    <testcase ${attrs}>`, `      <skipped message="${xml(`${n.node_outcome}${n.skip_reason ? ` (${n.skip_reason})` : ''}${n.upstream_unique_id ? ` upstream ${n.upstream_unique_id}` : ''}`)}"/>`, '    </testcase>');
      } else if (n.test_outcome === 'warned') {
        out.push(`    <testcase ${attrs}>`, `      <system-out>warned: ${xml(`${n.failing_rows ?? 0} failing row(s)`)}</system-out>`, '    </testcase>');
      } else out.push(`    <testcase ${attrs}/>`);
    }
    out.push('  </testsuite>');
  }
  out.push('</testsuites>');
  return out.join('\n') + '\n';
}

export function renderGate(r: GateResult, reporter: Reporter): string {
  switch (reporter) {
    case 'json':
      return renderJson(r);
    case 'github':
      return renderGithub(r);
    case 'junit':
      return renderJunit(r);
    default:
      return renderText(r);
  }
}
