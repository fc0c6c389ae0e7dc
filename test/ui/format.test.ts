import { describe, expect, it } from 'vitest';
import stringWidth from 'string-width';
import { cut, fit, fitLeft, middle, statusBar, textWidth, wrapWords } from '../../src/ui/format.js';
import { hintsFor } from '../../src/ui/keys.js';
import { parseMouse } from '../../src/ui/mouse.js';

describe('names cut in the middle', () => {
  it('keeps the start and the end, so siblings with a shared prefix stay apart', () => {
    const a = middle('test.acme.accepted_values_stg_orders_status.1a2b3c', 30);
    const b = middle('test.acme.accepted_values_stg_shipments_kind.9f8e7d', 30);
    expect(a).toHaveLength(30);
    expect(a).not.toBe(b);
    expect(a.startsWith('test.acme.acc')).toBe(true);
    expect(a.endsWith('1a2b3c')).toBe(true);
    expect(a).toContain('…');
    expect(middle('short', 30)).toBe('short');
    expect(middle('abcdef', 1)).toBe('…');
  });
});

describe('wide characters', () => {
  const name = 'model.acme.売上データ契約テーブル集計ビュー';
  it('are measured in display columns: cells keep their width, cuts keep both ends', () => {
    for (let w = 1; w <= 45; w++) {
      expect(stringWidth(fit(name, w)), `fit ${w}`).toBe(w);
      expect(stringWidth(fitLeft(name, w)), `fitLeft ${w}`).toBe(w);
      expect(stringWidth(cut(name, w)), `cut ${w}`).toBeLessThanOrEqual(w);
      expect(stringWidth(middle(name, w)), `middle ${w}`).toBeLessThanOrEqual(w);
      expect(stringWidth(middle(name, w)), `middle ${w}`).toBeGreaterThanOrEqual(Math.min(w, stringWidth(name)) - 1);
    }
    expect(middle(name, 20)).toMatch(/^model\.ac.*….*ビュー$/);
  });

  it('wrap within the width', () => {
    const out = wrapWords(`unique_id ${name} ${name}`, 16);
    for (const l of out) expect(stringWidth(l), l).toBeLessThanOrEqual(16);
    expect(out.join('').replace(/\s/g, '')).toBe(`unique_id${name}${name}`);
  });
});

describe('wrapping at spaces', () => {
  it('never breaks a token that fits on a line', () => {
    const line = 'kind other  span bf039ac1cc35818f  parent fd79b342864dff68';
    const out = wrapWords(line, 30);
    for (const l of out) expect(l.length).toBeLessThanOrEqual(30);
    expect(out.join(' ')).toContain('bf039ac1cc35818f');
    expect(out.some((l) => l.includes('bf039ac1cc35818f'))).toBe(true);
    expect(out.some((l) => l.includes('fd79b342864dff68'))).toBe(true);
  });

  it('splits a token longer than a line after a separator, and keeps every character', () => {
    const id = 'unit_test.jaffle_shop.stg_locations.test_does_location_opened_at_trunc_to_date';
    const out = wrapWords(`↳ ${id} error`, 40);
    for (const l of out) expect(l.length).toBeLessThanOrEqual(40);
    expect(out.join('').replace(/\s/g, '')).toBe(`↳${id}error`);
    expect(out.some((l) => /[._/]$/.test(l))).toBe(true);
  });
});

describe('the bottom bar', () => {
  it("shows the screen's own keys first and always the key that lists them all", () => {
    const runs = statusBar('runs', hintsFor('runs'), 160);
    expect(runs).toMatch(/^⏎ open {2}m mark for diff {2}\? keys/);
    expect(runs.trimEnd().endsWith('runs')).toBe(true);
    const tree = statusBar('runs › run 019c97ca', hintsFor('tree'), 60);
    expect(tree).toHaveLength(60);
    expect(tree).toContain('? keys');
    expect(tree).toContain('⏎ fold');
    expect(tree).not.toContain('J/K');
    expect(statusBar('x', hintsFor('detail'), 160)).toContain('J/K scroll detail');
    expect(statusBar('x', hintsFor('search'), 160)).toMatch(/⏎ keep matches {2}esc close/);
    expect(statusBar('x', hintsFor('palette'), 160)).toMatch(/⏎ run {2}esc close/);
    expect(statusBar('x', hintsFor('help'), 160)).toMatch(/^esc close help {2}q quit/);
  });
});

describe('mouse reports', () => {
  it('reads the wheel and a left click from SGR reports and ignores the rest', () => {
    expect(parseMouse('[<64;12;7M')).toEqual({ kind: 'wheelUp', x: 12, y: 7 });
    expect(parseMouse('\x1b[<65;1;2M')).toEqual({ kind: 'wheelDown', x: 1, y: 2 });
    expect(parseMouse('[<0;5;9M')).toEqual({ kind: 'click', x: 5, y: 9 });
    expect(parseMouse('[<0;5;9m')).toBe('ignored'); // release
    expect(parseMouse('[<2;5;9M')).toBe('ignored'); // right button
    expect(parseMouse('j')).toBeUndefined();
    expect(parseMouse('[A')).toBeUndefined();
  });
});

describe('characters that take no column of their own', () => {
  it('are shown escaped, so every character of a cell takes a column; marks inside a character stay', () => {
    expect(fit('a\u200bb\ufeff', 14)).toBe('a\\u200bb\\ufeff');
    expect(textWidth('a\u200bb')).toBe(8);
    expect(cut('x\u0301y', 5)).toBe('x\u0301y');
    expect(textWidth('x\u0301y')).toBe(2);
    expect(fit('\u0301x', 8)).toBe('\\u0301x ');
    // an emoji sequence joined by U+200D is one character two columns wide
    expect(textWidth('👨‍👩‍👧')).toBe(2);
    expect(wrapWords('ab\u200bcd', 20)).toEqual(['ab\\u200bcd']);
  });
});
