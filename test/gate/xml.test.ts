import { describe, expect, it } from 'vitest';
import { findAll, parseXml } from './xml.js';

describe('the tests\' XML reader', () => {
  it('reads elements, attributes, text and entities', () => {
    const x = parseXml('<?xml version="1.0" encoding="UTF-8"?>\n<a n="1 &amp; 2"><b/><b m=\'x\'>t &lt;&#65;&gt;</b></a>\n');
    expect(x.attrs.n).toBe('1 & 2');
    expect(findAll(x, 'b').map((b) => [b.attrs.m, b.text])).toEqual([[undefined, ''], ['x', 't <A>']]);
  });
  it.each([
    ['<a><b></a></b>', 'closes'],
    ['<a>x & y</a>', 'bare &'],
    ['<a n=1/>', 'malformed tag'],
    ['<a n="1" n="2"/>', 'repeated'],
    ['<a>\u0001</a>', 'forbids'],
    ['<a/><b/>', 'second root'],
    ['<a>', 'never closed'],
    ['<a>&nbsp;</a>', 'unknown entity'],
  ])('rejects %s', (doc, msg) => {
    expect(() => parseXml(doc)).toThrow(msg);
  });
});
