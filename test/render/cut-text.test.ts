import { describe, expect, it } from 'vitest';
import { cutText } from '../../src/render/cut-text.js';

describe('cutText', () => {
  it('keeps text that fits, cuts the rest to the length', () => {
    expect(cutText('abc', 3)).toBe('abc');
    expect(cutText('abcdef', 3)).toBe('abc');
    expect(cutText('abc', 0)).toBe('');
  });

  it('never leaves half of a character outside the BMP', () => {
    expect(cutText('ab\u{1F4A5}c', 3)).toBe('ab');
    expect(cutText('ab\u{1F4A5}c', 4)).toBe('ab\u{1F4A5}');
    expect(cutText('\u{1F4A5}', 1)).toBe('');
  });
});
