/** The seeded fuzz (test/helpers/fuzz.ts) on the real engine samples (../shared/samples/fusion-jsonl). */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, it } from 'vitest';
import { tempDir } from '../helpers/fixtures.js';
import { FUZZ_SEED, FUZZ_TIMEOUT_MS, fuzz, jsonlSource, variants, type JsonlSource } from '../helpers/fuzz.js';
import { seededRandom } from '../../src/produce/ids.js';
import { FUSION, samplesNote } from '../helpers/samples.js';

const dir = tempDir('runlens-fuzz-');
const note = samplesNote(FUSION);

describe.skipIf(note.missing)(note.title('fuzz: malformed variants of the real engine samples'), () => {
  const rnd = seededRandom(FUZZ_SEED + 1);
  let jsonl: JsonlSource[] = [];
  beforeAll(() => {
    jsonl = readdirSync(FUSION).filter((f) => f.endsWith('.jsonl')).map((f) => jsonlSource(f, readFileSync(path.join(FUSION, f))));
  });

  it('100 variants: exit 0/1/2, named errors, no gate passes what it could not read', async () => {
    await fuzz(variants(dir, jsonl, [], 100, rnd, 'engine'), []);
  }, FUZZ_TIMEOUT_MS);
});
