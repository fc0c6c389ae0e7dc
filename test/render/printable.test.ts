/** Text for people shows what could act on a terminal, or hide, as visible escapes. */
import { describe, expect, it } from 'vitest';
import { printable, printableLine } from '../../src/render/printable.js';

describe('printable', () => {
  it('escapes control characters and keeps line breaks and tabs', () => {
    expect(printable('a\u001b[2J\u0007\u0000b\n\tc')).toBe('a\\x1b[2J\\x07\\x00b\n\tc');
  });

  it('shows invisible characters, so that two ids differing only by one print differently', () => {
    // zero-width space, left-to-right and right-to-left marks, word joiner, byte order mark
    expect(printable('model.a\u200bb')).toBe('model.a\\u200bb');
    expect(printable('\ufeff{"a":1}')).toBe('\\ufeff{"a":1}');
    expect(printableLine('x\u200e\u200f\u2060y')).toBe('x\\u200e\\u200f\\u2060y');
  });

  it('leaves text of other scripts as it is (joiners that shape Persian and emoji included)', () => {
    for (const s of ['naïve café', 'می‌خواهم', '👨‍👩‍👧', 'ß∑中文']) expect(printable(s)).toBe(s);
  });
});
