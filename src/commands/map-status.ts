import type { CommandBody } from './command.js';
import { mapStatus, UnknownStatusError } from '../telemetry/status-map.js';
import { UsageError } from '../errors.js';

interface Args {
  status: string;
  'resource-type'?: string;
  message?: string;
  command?: string;
  format: 'text' | 'json';
}

export const mapStatusCommand: CommandBody<Args> = {
  builder: (y) =>
    y
      .positional('status', { type: 'string', demandOption: true, describe: 'e.g. success, error, skipped, pass, warn, fail, "partial success", reused, no-op' })
      .option('resource-type', { type: 'string', describe: 'resource type of the node (test and unit_test take test statuses, source freshness statuses)' })
      .option('message', { type: 'string', describe: 'the result message (e.g. "Skipping due to fail_fast", "NO-OP")' })
      .option('command', { type: 'string', describe: 'the command that wrote the results (compile, generate, show change what success means)' })
      .option('format', { choices: ['text', 'json'] as const, default: 'text' as const, describe: 'text (tab-separated) or json' })
      .example('$0 map-status fail --resource-type test', 'node_outcome success, test_outcome failed')
      .example("$0 map-status skipped --message 'Skipping due to fail_fast'", 'the skip reason depends on the message'),
  handler: (a) => {
    let m;
    try {
      m = mapStatus(a.status, { resourceType: a['resource-type'], message: a.message, command: a.command });
    } catch (e) {
      if (e instanceof UnknownStatusError) throw new UsageError(e.message);
      throw e;
    }
    const out = { status: a.status, node_outcome: m.node_outcome, skip_reason: m.skip_reason, test_outcome: m.test_outcome, freshness_outcome: m.freshness_outcome ?? null, source: m.source, note: m.note };
    if (a.format === 'json') process.stdout.write(JSON.stringify(out) + '\n');
    else
      process.stdout.write(
        `node_outcome\t${m.node_outcome}\nskip_reason\t${m.skip_reason ?? '-'}\ntest_outcome\t${m.test_outcome ?? '-'}\n${m.freshness_outcome ? `freshness_outcome\t${m.freshness_outcome}\n` : ''}`,
      );
  },
};
