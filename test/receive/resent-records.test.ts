/** The receiver's memory of records it accepted: a copy sent again is dropped, for a bounded while. */
import { describe, expect, it } from 'vitest';
import { GENERATION_MS, ResentRecords } from '../../src/ingest/resent-records.js';
import { LiveRows } from '../../src/store/live.js';

/** Log rows; `eventIds`: the event id each one was sent with (none: one is made, a new one each time). */
function logs(bodies: string[], eventIds: (string | null)[] = []): LiveRows {
  const rows = new LiveRows();
  for (const [k, body] of bodies.entries()) {
    const i = rows.addRow();
    rows.setStr('record_type', i, 'LogRecord');
    rows.setStr('trace_id', i, '5b8efff798038103d269b633813fc60c');
    rows.setBigValue('span_id', i, 0xeee19b7ec3c1b174n);
    rows.setBigValue('time_ns', i, 1772073189000000000n + BigInt(k % 2));
    rows.setStr('event_type', i, '');
    rows.setStr('body', i, body);
    const sent = eventIds[k] ?? null;
    rows.setEventId(i, sent ?? crypto.randomUUID(), sent !== null);
  }
  return rows;
}

describe('ResentRecords', () => {
  it('keeps every record of a request, even two alike: only a later request repeats one (a retry resends a whole request)', () => {
    const r = new ResentRecords();
    const first = r.keep(logs(['a', 'a', 'a']));
    expect([first.rows.length, first.repeated]).toEqual([3, 0]);
    const again = r.keep(logs(['a', 'a']));
    expect([again.rows.length, again.repeated]).toEqual([0, 2]);
  });

  it("a log's identity holds the event id it was sent with, not one made for it", () => {
    const r = new ResentRecords();
    expect(r.keep(logs(['a'], ['e-1'])).repeated).toBe(0);
    // the same log with another event id is another record; sent again with its own, a copy
    expect(r.keep(logs(['a'], ['e-2'])).repeated).toBe(0);
    expect(r.keep(logs(['a'], ['e-1'])).repeated).toBe(1);
    // sent without one (a new one is made each time): the copy is still known
    expect(r.keep(logs(['b'])).repeated).toBe(0);
    expect(r.keep(logs(['b'])).repeated).toBe(1);
  });

  it('keeps what is new, drops what was received before', () => {
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
