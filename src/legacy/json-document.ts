import { readFileSync } from 'node:fs';
import { InputError, errorMessage } from '../errors.js';

/** A whole JSON document (run_results.json, manifest.json); unreadable or malformed names the file. */
export function readJsonDocument(file: string, what: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new InputError(`not a readable ${what}: ${errorMessage(e)}`, file);
  }
}
