/** The seeded fuzz (test/helpers/fuzz.ts) on the project's own samples and on generated runs. */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, it } from 'vitest';
import { generate } from '../../src/produce/generate/index.js';
import { tempDir } from '../helpers/fixtures.js';
import { FUZZ_SEED, FUZZ_TIMEOUT_MS, fuzz, jsonlSource, misshapenParquet, variants, type JsonlSource } from '../helpers/fuzz.js';
import { seededRandom } from '../../src/produce/ids.js';
import { ROOT } from '../helpers/samples.js';

const dir = tempDir('runlens-fuzz-');

describe('fuzz: malformed variants of the project samples and of generated runs', () => {
  const rnd = seededRandom(FUZZ_SEED);
  let jsonl: JsonlSource[] = [];
  let parquet: string[] = [];
  beforeAll(async () => {
    const samples = path.join(ROOT, 'samples');
    const gen = path.join(dir, 'generated');
    await generate({ output: `${gen}.jsonl`, runs: 2, nodes: 25, seed: 11, failRate: 0.1 });
    await generate({ output: `${gen}.parquet`, runs: 2, nodes: 25, seed: 11, failRate: 0.1 });
    jsonl = [
      ...readdirSync(samples).filter((f) => f.endsWith('.jsonl')).map((f) => jsonlSource(f, readFileSync(path.join(samples, f)))),
      jsonlSource('generated.jsonl', readFileSync(`${gen}.jsonl`)),
    ];
    parquet = [...readdirSync(samples).filter((f) => f.endsWith('.parquet')).map((f) => path.join(samples, f)), `${gen}.parquet`];
  });

  it('100 variants and 3 misshapen Parquet files: exit 0/1/2, named errors, no gate passes what it could not read', async () => {
    const vs = variants(dir, jsonl, parquet, 100, rnd, 'project');
    await fuzz(vs, await misshapenParquet(dir, parquet[parquet.length - 1]!, rnd, 3));
  }, FUZZ_TIMEOUT_MS);
});
