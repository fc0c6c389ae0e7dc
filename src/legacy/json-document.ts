import { isUtf8 } from 'node:buffer';
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { InputError, errorMessage } from '../errors.js';
import { TOO_DEEP, tooDeep } from '../ingest/nesting.js';
import { findLoneSurrogate, loneSurrogateText } from '../ingest/lone-surrogate.js';
import { BOM_PROBLEM, NOT_UTF8, utf16Problem } from '../ingest/text-encoding.js';
import { refuseOutsideStep } from '../service/job-step.js';
import { KEY_TWICE, keyWrittenTwiceAt } from '../produce/line-form.js';

/** A JSON value as a message names it: `the string "x"`, `a list`, `an object`, `5`. */
export const shown = (v: unknown) => (typeof v === 'string' ? `the string ${JSON.stringify(v)}` : Array.isArray(v) ? 'a list' : typeof v === 'object' ? 'an object' : JSON.stringify(v));

/** Line and column (1-based) of a character offset. */
function lineColumn(text: string, pos: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < pos; i = text.indexOf('\n', i + 1)) {
    line++;
    start = i + 1;
  }
  return { line, column: pos - start + 1 };
}

/**
 * A whole JSON document (run_results.json, manifest.json); unreadable or malformed names the file,
 * and malformed JSON its line and column (JSON.parse gives only a character offset); a lone
 * surrogate or a value nested too deep the field that holds it, invalid UTF-8 the file, a key written twice its line and path.
 */
export function readJsonDocument(file: string, what: string): unknown {
  refuseOutsideStep(file, what);
  let bytes: Buffer;
  try {
    // Bytes first, then one decode: cheaper than readFileSync(file, 'utf8') on a big run_results.json.
    const raw = readFileSync(file);
    bytes = raw[0] === 0x1f && raw[1] === 0x8b ? gunzipSync(raw) : raw;
  } catch (e) {
    throw new InputError(`not a readable ${what}: ${errorMessage(e)}`, file);
  }
  // refused as in telemetry JSONL: a decode would put U+FFFD in its place, silently (a node id changed)
  const utf16 = utf16Problem(bytes);
  if (utf16) throw new InputError(utf16, file);
  if (!isUtf8(bytes)) throw new InputError(NOT_UTF8, file);
  // Said as such: JSON.parse's message would quote the invisible character.
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) throw new InputError(BOM_PROBLEM, file);
  const text = bytes.toString('utf8');
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    const msg = errorMessage(e);
    const at = /at position (\d+)/.exec(msg);
    if (!at) throw new InputError(`not a readable ${what}: ${msg}`, file);
    const { line, column } = lineColumn(text, Number(at[1]));
    throw new InputError(`not a readable ${what}: ${msg.replace(/ in JSON at position \d+.*$/s, '')} (column ${column})`, file, line);
  }
  // the translation writes it again (and the walks below recurse)
  const deep = tooDeep(doc);
  if (deep !== undefined) throw new InputError(TOO_DEEP, file, undefined, deep);
  // JSON.parse keeps the last of a key written twice, silently: refused as in telemetry JSONL
  const twice = keyWrittenTwiceAt(text, doc)[0];
  if (twice) throw new InputError(KEY_TWICE, file, lineColumn(text, twice.at).line, twice.field);
  // refused as in telemetry JSONL: the translation could not be loaded
  const lone = findLoneSurrogate(doc, text);
  if (lone) throw new InputError(loneSurrogateText(lone), file, undefined, lone.path);
  return doc;
}
