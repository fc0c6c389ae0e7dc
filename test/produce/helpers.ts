import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { skipOrFailInCi } from '../helpers/samples.js';

/** The real engine's JSONL files, read by path (never copied into the project). */
export const SAMPLES_DIR = resolve(import.meta.dirname, '../../../shared/samples/fusion-jsonl');
export const SAMPLE_FILES = ['forwarder-otel-preview120.jsonl', 'forwarder-otel-preview72.jsonl', 'forwarder-otel_failed-preview120.jsonl'];
export const samplesPresent = SAMPLE_FILES.every((f) => existsSync(join(SAMPLES_DIR, f)));
export const SKIP_MSG = `real samples missing under ${SAMPLES_DIR}; skipping`;
if (!samplesPresent) skipOrFailInCi(SKIP_MSG);

export function sampleLines(name: string): string[] {
  return readFileSync(join(SAMPLES_DIR, name), 'utf8').split('\n').filter((l) => l !== '');
}

export function tempDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'runlens-produce-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
