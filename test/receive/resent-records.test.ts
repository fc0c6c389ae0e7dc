/** The receiver's memory of records it accepted: a copy sent again is dropped, for a bounded while. */
import { describe, expect, it } from 'vitest';
import { GENERATION_MS, ResentRecords } from '../../src/ingest/resent-records.js';
import { LiveRows } from '../../src/store/live.js';

function logs(bodies: string[]): LiveRows {
  const rows = new LiveRows();
  for (const [k, body] of bodies.entries()) {
    const i = rows.addRow();
    rows.setStr('record_type', i, 'LogRecord');
    rows.setStr('trace_id', i, '5b8efff798038103d269b633813fc60c');
    rows.setBigValue('span_id', i, 0xeee19b7ec3c1b174n);
    rows.setBigValue('time_ns', i, 1772073189000000000n + BigInt(k % 2));
    rows.setStr('event_type', i, '');
    rows.setStr('body', i, body);
  }
  return rows;
}

describe('ResentRecords', () => {
  it('keeps what is new, drops what was received before or earlier in the same batch', () => {
    const r = new ResentRecords();
    const first = r.keep(logs(['a', 'b', 'x'.repeat(500)]));
    expect([first.rows.length, first.repeated]).toEqual([3, 0]);
    const again = r.keep(logs(['a', 'c', 'x'.repeat(500)]));
    expect([again.rows.length, again.repeated]).toEqual([1, 2]);
    expect(again.rows.row(0).body).toBe('c');
    // same body at another time is another record
    expect(r.keep(logs(['z', 'a'])).repeated).toBe(0);
  });

  it('forgets records after two generations, and records it was told could not be stored', () => {
    let now = 0;
    const r = new ResentRecords(() => now);
    r.keep(logs(['a']));
    now += GENERATION_MS;
    expect(r.keep(logs(['a'])).repeated).toBe(1);
    now += 2 * GENERATION_MS;
    r.keep(logs(['b']));
    now += GENERATION_MS;
    expect(r.keep(logs(['a'])).repeated).toBe(0);
    r.forget(logs(['a']));
    expect(r.keep(logs(['a'])).repeated).toBe(0);
  });
});
