/**
 * Wire-level checks of an OTLP protobuf request, made before protobufjs decodes it, for what its
 * decoder lets through: it picks a known field by number alone and reads it as its declared type
 * whatever the wire type says (a length read from a varint, bytes as a message...), it skips field
 * number 0, and it turns invalid UTF-8 in a string into U+FFFD. Rejected here (the receiver answers
 * 400): field number 0, the reserved wire types 6 and 7, a known field sent with another wire type,
 * a group not closed by its own field, a length beyond the message, invalid UTF-8 in a string,
 * nesting deeper than protobufjs' limit. This walks tags and lengths only: protobufjs decodes.
 */
import { isUtf8 } from 'node:buffer';
import protobuf from 'protobufjs';

export class WireError extends Error {}

/** What a message type's fields look like on the wire, by field number. */
interface Plan {
  /** expected wire type (-1: no such field, skipped as unknown) */
  wire: Int8Array;
  /** a repeated number field, which may also come packed (wire type 2) */
  packed: Uint8Array;
  /** a string field: its bytes must be UTF-8 */
  utf8: Uint8Array;
  /** message fields' plans */
  sub: (Plan | undefined)[];
}

const WIRE: Record<string, number> = {
  double: 1, fixed64: 1, sfixed64: 1, float: 5, fixed32: 5, sfixed32: 5, string: 2, bytes: 2,
  int32: 0, int64: 0, uint32: 0, uint64: 0, sint32: 0, sint64: 0, bool: 0,
};

/** For fields of unknown messages (inside groups): nothing is known, every field number is unknown. */
const UNKNOWN: Plan = { wire: new Int8Array(0), packed: new Uint8Array(0), utf8: new Uint8Array(0), sub: [] };

const plans = new Map<protobuf.Type, Plan>();

function planOf(type: protobuf.Type): Plan {
  let plan = plans.get(type);
  if (plan) return plan;
  const fields = type.fieldsArray.map((f) => f.resolve());
  const size = Math.max(0, ...fields.map((f) => f.id)) + 1;
  plan = { wire: new Int8Array(size).fill(-1), packed: new Uint8Array(size), utf8: new Uint8Array(size), sub: new Array<Plan | undefined>(size) };
  // in the cache before its fields: message types refer to themselves (AnyValue -> ArrayValue -> AnyValue)
  plans.set(type, plan);
  for (const f of fields) {
    if (f.resolvedType instanceof protobuf.Type) {
      plan.wire[f.id] = 2;
      plan.sub[f.id] = planOf(f.resolvedType);
    } else {
      const wire = f.resolvedType instanceof protobuf.Enum ? 0 : WIRE[f.type];
      if (wire === undefined) throw new Error(`OTLP schema: field ${type.name}.${f.name} has a type the wire check does not know (${f.type})`);
      plan.wire[f.id] = wire;
      if (f.repeated && wire !== 2) plan.packed[f.id] = 1;
      if (f.type === 'string') plan.utf8[f.id] = 1;
    }
  }
  return plan;
}

const MAX_DEPTH = protobuf.util.recursionLimit ?? 100;

/** Throws a WireError when `body` is not a well-formed encoding of `type`. */
export function verifyWire(body: Uint8Array, type: protobuf.Type): void {
  new Walk(body).message(0, body.length, planOf(type), 0, 0);
}

class Walk {
  constructor(private readonly b: Uint8Array) {}

  private fail(at: number, why: string): never {
    throw new WireError(`${why} at offset ${at}`);
  }

  /** A varint of up to 32 bits at `pos`; returns the position after it, the value in `this.v`. */
  private v = 0;
  private varint32(pos: number, end: number): number {
    const b = this.b;
    let v = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      if (pos >= end) this.fail(pos, 'truncated varint');
      const byte = b[pos++]!;
      v |= (byte & 0x7f) << shift;
      if (byte < 0x80) {
        this.v = v >>> 0;
        return pos;
      }
    }
    return this.fail(pos, 'a tag or length longer than 32 bits');
  }

  /**
   * The fields of one message in [pos, end); inside a group (`group` > 0) up to its end tag.
   * Returns the position after the message (after the group's end tag).
   */
  message(pos: number, end: number, plan: Plan, depth: number, group: number): number {
    if (depth > MAX_DEPTH) this.fail(pos, `nesting deeper than ${MAX_DEPTH}`);
    const b = this.b;
    while (pos < end) {
      const at = pos;
      pos = this.varint32(pos, end);
      const id = this.v >>> 3;
      const wire = this.v & 7;
      if (id === 0) this.fail(at, 'field number 0');
      const expected = id < plan.wire.length ? plan.wire[id]! : -1;
      if (expected !== -1 && wire !== expected && !(wire === 2 && plan.packed[id] === 1)) {
        this.fail(at, `field ${id} with wire type ${wire} (its type needs ${expected})`);
      }
      switch (wire) {
        case 0: {
          let n = 0;
          while (pos < end && b[pos]! >= 0x80 && n < 9) pos++, n++;
          if (pos >= end || b[pos]! >= 0x80) this.fail(at, 'truncated or overlong varint');
          pos++;
          break;
        }
        case 1:
          pos += 8;
          break;
        case 2: {
          pos = this.varint32(pos, end);
          const len = this.v;
          if (len > end - pos) this.fail(at, `field ${id}: a length of ${len} beyond the message`);
          if (expected === 2) {
            const sub = plan.sub[id];
            if (sub !== undefined) this.message(pos, pos + len, sub, depth + 1, 0);
            else if (plan.utf8[id] === 1) this.utf8(pos, pos + len, id);
          }
          pos += len;
          break;
        }
        case 3:
          pos = this.message(pos, end, UNKNOWN, depth + 1, id);
          break;
        case 4:
          if (id !== group) this.fail(at, `an end of group ${id} that was not opened`);
          return pos;
        case 5:
          pos += 4;
          break;
        default:
          this.fail(at, `invalid wire type ${wire}`);
      }
    }
    if (pos > end) this.fail(end, 'truncated message');
    if (group !== 0) this.fail(end, `group ${group} not closed`);
    return pos;
  }

  private utf8(start: number, end: number, id: number): void {
    const b = this.b;
    // mostly ASCII: a byte loop is cheaper than a view for the native check
    for (let i = start; i < end; i++) {
      if (b[i]! >= 0x80) {
        if (!isUtf8(b.subarray(i, end))) this.fail(start, `field ${id}: a string that is not UTF-8`);
        return;
      }
    }
  }
}
