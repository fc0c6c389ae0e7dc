import { describe, expect, it } from 'vitest';
import { BINDINGS, charName, helpFor, keyName, resolveKey, type Context } from '../../src/ui/keys.js';

const CONTEXTS: Context[] = ['runs', 'tree', 'search', 'palette', 'results', 'diff', 'help'];
const key = (k: Partial<Record<string, boolean>> = {}) =>
  ({ upArrow: false, downArrow: false, leftArrow: false, rightArrow: false, pageDown: false, pageUp: false, home: false, end: false,
    return: false, escape: false, ctrl: false, shift: false, tab: false, backspace: false, delete: false, meta: false,
    super: false, hyper: false, capsLock: false, numLock: false, ...k }) as Parameters<typeof keyName>[1];

describe('key map', () => {
  it('binds each key at most once per context (no hidden conflicts)', () => {
    for (const ctx of CONTEXTS) {
      const seen = new Map<string, string>();
      for (const b of BINDINGS.filter((x) => x.contexts.includes(ctx))) {
        for (const k of b.keys) {
          expect(seen.get(k), `${ctx}: "${k}" bound to ${seen.get(k)} and ${b.action}`).toBeUndefined();
          seen.set(k, b.action);
        }
      }
    }
  });

  it('resolves screen keys before global ones', () => {
    expect(resolveKey('tree', 'j')).toBe('down');
    expect(resolveKey('tree', 'enter')).toBe('toggle');
    expect(resolveKey('runs', 'enter')).toBe('open');
    expect(resolveKey('runs', 'm')).toBe('mark');
    expect(resolveKey('tree', 'u')).toBe('rootCause');
    expect(resolveKey('tree', '/')).toBe('search');
    expect(resolveKey('tree', 'q')).toBe('quit');
    expect(resolveKey('results', ':')).toBe('palette');
    expect(resolveKey('tree', 'esc')).toBe('back');
  });

  it('lets q and ? be typed in text contexts; ctrl+c still quits', () => {
    for (const ctx of ['search', 'palette'] as const) {
      expect(resolveKey(ctx, 'q')).toBeUndefined();
      expect(resolveKey(ctx, '?')).toBeUndefined();
      expect(resolveKey(ctx, 'ctrl+c')).toBe('quit');
      expect(resolveKey(ctx, 'esc')).toBe('cancel');
    }
  });

  it('names ink key events and chunk characters', () => {
    expect(keyName('', key({ downArrow: true }))).toBe('down');
    expect(keyName('', key({ return: true }))).toBe('enter');
    expect(keyName('d', key({ ctrl: true }))).toBe('ctrl+d');
    expect(keyName(' ', key())).toBe('space');
    expect(keyName('G', key({ shift: true }))).toBe('G');
    expect(charName('\r')).toBe('enter');
    expect(charName('\x04')).toBe('ctrl+d');
  });

  it('generates help for every context from the table, with the global keys', () => {
    const tree = helpFor('tree');
    expect(tree.some((r) => r.keys.includes('u') && /root cause/.test(r.help))).toBe(true);
    expect(tree.some((r) => r.keys.startsWith('q'))).toBe(true);
    expect(helpFor('search').some((r) => r.keys.startsWith('q'))).toBe(false);
    for (const b of BINDINGS) expect(b.help.length).toBeGreaterThan(3);
  });
});
