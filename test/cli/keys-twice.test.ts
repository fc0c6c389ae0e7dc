/** Keys written twice found in any JSON text, whatever its white space and escapes. */
import { describe, expect, it } from 'vitest';
import { keyWrittenTwiceAt } from '../../src/produce/line-form.js';

const twice = (text: string) => keyWrittenTwiceAt(text, JSON.parse(text));

describe('keyWrittenTwiceAt', () => {
  it('finds a key written twice at any depth, with where it starts', () => {
    const text = '{"a": 1, "b": {"c": [ {"d": 1, "d" : 2} ]}, "a": 3}';
    expect(twice(text)).toEqual([
      { field: 'b.c[0].d', at: text.indexOf('"d" :') },
      { field: 'a', at: text.lastIndexOf('"a"') },
    ]);
  });

  it('is not misled by quotes and colons in strings, or a key ending in a backslash', () => {
    for (const text of ['{"a": "x\\": y", "b": "\\"", "c\\\\": 1}', '{"a" \n : {"b":"\\\\\\": 1"}}', '{"a":[],"b":{}}']) expect(twice(text), text).toEqual([]);
    const backslash = '{"c\\\\": 1, "c\\\\" : 2}';
    expect(twice(backslash)).toEqual([{ field: 'c\\', at: backslash.lastIndexOf('"c') }]);
  });
});
