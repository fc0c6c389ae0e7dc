import type { CommandBody } from './command.js';
import { criticalMarks, criticalPathTable, criticalSpans, markCritical } from '../analyze/critical-path.js';
import { buildTree, buildTreeText, spanTraces } from '../analyze/tree.js';
import { writeJsonItems, writePieces } from '../render/json-stream.js';
import { treeJson, treeTextLines } from '../render/tree-text.js';
import { withModel, withModelOptions, type ModelArgs } from './model-args.js';
import { valueOption, wholeNumber } from './options.js';

interface Args extends ModelArgs {
  trace?: string;
  depth?: number;
  format: 'text' | 'json';
}

export const treeCommand: CommandBody<Args> = {
  builder: (y) =>
    withModelOptions(y)
      .option('trace', valueOption('one run only: trace id, invocation id, or a unique prefix'))
      .option('depth', { type: 'number', describe: 'print spans down to this depth (0 = roots only)' })
      .option('format', { choices: ['text', 'json'] as const, default: 'text' as const, describe: 'text for people, json (nested spans) for programs' })
      .example('$0 tree samples/failed-build.jsonl --depth 2', 'phases and nodes, deeper spans folded into a count')
      .example('$0 tree logs/ --trace 019cadc6', 'one run, by a prefix of its trace or invocation id'),
  handler: (a) => {
    if (a.depth !== undefined) wholeNumber('--depth', a.depth, 0, { of: 'levels', example: '--depth 2' });
    return withModel(a, async (db) => {
      const ids = await spanTraces(db, a.trace, (m) => process.stderr.write(`runlens: ${m}\n`));
      if (a.format === 'json') {
        // one run's tree at a time: the document of many large runs is past the longest string
        async function* trees() {
          for (const id of ids) yield treeJson(markCritical(await buildTree(db, id), await criticalSpans(db, id)), a.depth);
        }
        return writeJsonItems(process.stdout, trees(), a.trace !== undefined);
      }
      // written as it is laid out: a reader that goes away (`| head`) stops it, and no tree is held whole
      async function* text() {
        for (const id of ids) {
          yield* treeTextLines(await buildTreeText(db, id, a.depth, criticalMarks(await criticalPathTable(db, id))));
          if (ids.length > 1) yield '\n';
        }
      }
      return writePieces(process.stdout, text());
    });
  },
};
