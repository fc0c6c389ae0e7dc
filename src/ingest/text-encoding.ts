/**
 * What is said of text that is not UTF-8 JSON as runlens reads it: one wording for every reader
 * (telemetry JSONL, the older engine's files). No imports: format detection, which every command's
 * --help loads, uses it.
 */

/** Said of a line (or file) with bytes that are not UTF-8. */
export const NOT_UTF8 = 'not valid UTF-8';

/**
 * Why a file whose first bytes are these (decompressed) cannot be read, when they are UTF-16 text:
 * a byte order mark FF FE or FE FF, or a NUL beside each of the first two characters (Windows
 * PowerShell's `>` writes UTF-16LE). Said as such: read as UTF-8 it is not JSON, for a reason no
 * one could see.
 */
export function utf16Problem(head: Buffer): string | undefined {
  const [a, b, c, d] = head;
  const little = (a === 0xff && b === 0xfe) || (head.length >= 4 && a !== 0 && b === 0 && c !== 0 && d === 0);
  const big = (a === 0xfe && b === 0xff) || (head.length >= 4 && a === 0 && b !== 0 && c === 0 && d !== 0);
  if (!little && !big) return undefined;
  return `UTF-16 text (${little ? 'little' : 'big'}-endian), not UTF-8: save the file as UTF-8 (without a byte order mark)`;
}

export const BOM_PROBLEM = 'starts with a UTF-8 byte order mark (BOM), which JSON does not allow: save the file without one';
