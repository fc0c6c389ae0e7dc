import { describe, expect, it } from 'vitest';
import { MAX_LINE_CHARS, MAX_REASON_LINES, cleanMessage, reasonOf } from '../../src/gate/reason.js';

describe('a reason without terminal noise', () => {
  it('drops ANSI codes (colour, cursor, hyperlinks) and carriage returns', () => {
    expect(cleanMessage('\u001b[1;31mDatabase Error\u001b[0m\r\n  \u001b]8;;file:///x\u0007x.sql\u001b]8;;\u0007 \u001b[2Kfailed')).toBe('Database Error\n  x.sql failed');
  });

  it('drops progress lines, keeps lines that only mention counts', () => {
    expect(cleanMessage('1 of 1 ERROR creating sql table model public.orders ............ [ERROR in 0.56s]\nDatabase Error\n  3 of 5 rows were rejected')).toBe('Database Error\n  3 of 5 rows were rejected');
    expect(cleanMessage('12 of 40 START sql view model main.x ........ [RUN]')).toBe('');
  });

  it('drops a backtrace and what follows it only while it is frames', () => {
    expect(cleanMessage('panic: boom\nstack backtrace:\n   0: std::rt\n             at src/rt.rs:10\n   1: main\n\nafter the trace')).toBe('panic: boom\nafter the trace');
    expect(cleanMessage('Syntax error\n  LINE 43: final as (\n           ^')).toBe('Syntax error\n  LINE 43: final as (\n           ^');
  });

  it('keeps lines of the error that only look like progress or frames', () => {
    expect(cleanMessage('2 of 3 partitions failed to load [partition=2026-01-01]')).toBe('2 of 3 partitions failed to load [partition=2026-01-01]');
    expect(cleanMessage('Constraint check failed:\n0: column "id" is null\n1: column "name" is too long')).toBe(
      'Constraint check failed:\n0: column "id" is null\n1: column "name" is too long');
    // the older engine's progress lines, each status word
    for (const p of ['1 of 5 OK created sql table model main.a ........ [SELECT 10 in 0.12s]', '3 of 5 SKIP relation main.c ........ [SKIP]',
      '4 of 5 FAIL 1 not_null_a_id ........ [FAIL 1 in 0.03s]', '5 of 5 PASS unique_a_id ........ [PASS in 0.02s]', '2 of 9 WARN 3 accepted_values ... [WARN 3 in 0.1s]']) {
      expect(cleanMessage(`${p}\ncause`), p).toBe('cause');
    }
    // a backtrace that starts without its header
    expect(cleanMessage('boom\n   0: __mh_execute_header\n   1: <alloc::boxed::Box<F,A> as core::ops::function::FnOnce<Args>>::call_once\nafter')).toBe('boom\nafter');
  });

  it('leaves out a message already said, keeps the fuller of two', () => {
    const block = 'Database Error in model orders (models/orders.sql)\n  syntax error at or near "final"';
    expect(reasonOf([block, `  ${block.replaceAll('\n', '\n  ')}`])).toBe(block);
    expect(reasonOf(['Database Error in model orders (models/orders.sql)', block])).toBe(block);
    expect(reasonOf(['first', null, '', 'second'])).toBe('first\nsecond');
  });

  it('stops after MAX_REASON_LINES lines and says how many more', () => {
    const long = Array.from({ length: MAX_REASON_LINES + 5 }, (_, i) => `line ${i}`).join('\n');
    const r = reasonOf([long]).split('\n');
    expect(r).toHaveLength(MAX_REASON_LINES + 1);
    expect(r.at(-1)).toBe('… 5 more lines');
  });

  it('cuts a long line before a character that would not fit whole, never inside it', () => {
    const head = 'x'.repeat(MAX_LINE_CHARS - 1);
    expect(cleanMessage(`${head}\u{1F4A5}tail`)).toBe(`${head}…`);
    expect(cleanMessage(`${head}y\u{1F4A5}`)).toBe(`${head}y…`);
  });
});
