/**
 * Minimal columnar builders that produce apache-arrow Data directly from typed arrays. The stock
 * arrow builders allocate per value; these grow plain buffers.
 */
import {
  Bool, Data, Dictionary, Field, Int32, LargeUtf8, List, Struct, TimestampNanosecond, Uint32, Uint64, Utf8, makeData, makeVector,
  type DataType,
} from 'apache-arrow';
import type { ColKind } from './parquet-layout.js';

let dictId = 0;

export function arrowType(kind: ColKind): DataType {
  switch (kind) {
    case 'dict':
      return new Dictionary(new Utf8(), new Int32(), dictId++);
    case 'lstr':
    case 'json':
      return new LargeUtf8();
    case 'u64':
      return new Uint64();
    case 'u32':
      return new Uint32();
    case 'i32':
      return new Int32();
    case 'bool':
      return new Bool();
    case 'ts':
      return new TimestampNanosecond();
  }
}

/** Validity bitmap that grows with the column. */
class Validity {
  bits = new Uint8Array(1024);
  nulls = 0;
  set(i: number, valid: boolean): void {
    if (i >> 3 >= this.bits.length) {
      const n = new Uint8Array(this.bits.length * 2);
      n.set(this.bits);
      this.bits = n;
    }
    if (valid) this.bits[i >> 3]! |= 1 << (i & 7);
    else this.nulls++;
  }
  /** n more null slots starting at i (bits are already 0) */
  nullsAt(i: number, n: number): void {
    const need = (i + n) >> 3;
    if (need >= this.bits.length) {
      let len = this.bits.length * 2;
      while (len <= need) len *= 2;
      const b = new Uint8Array(len);
      b.set(this.bits);
      this.bits = b;
    }
    this.nulls += n;
  }
  bitmap(length: number): Uint8Array | undefined {
    return this.nulls ? this.bits.subarray(0, (length + 7) >> 3) : undefined;
  }
}

export interface ColumnBuilder {
  readonly type: DataType;
  length: number;
  /** null/undefined append a null */
  push(v: unknown): void;
  /** append nulls until the column has `n` rows (cheap: zeroed buffers already mean null) */
  padTo(n: number): void;
  finish(): Data;
}

function grow<T extends Uint8Array | Int32Array | Uint32Array | BigInt64Array>(a: T, need: number): T {
  if (need <= a.length) return a;
  let n = a.length * 2;
  while (n < need) n *= 2;
  const b = new (a.constructor as new (n: number) => T)(n);
  b.set(a as never);
  return b;
}

/** UTF-8 strings with 32-bit (Utf8) or 64-bit (LargeUtf8) offsets. */
class StringBuilder {
  bytes = Buffer.allocUnsafe(1 << 16);
  used = 0;
  ends: number[] = [];
  add(s: string): void {
    const max = s.length * 3;
    if (this.used + max > this.bytes.length) {
      let n = this.bytes.length * 2;
      while (n < this.used + max) n *= 2;
      const b = Buffer.allocUnsafe(n);
      this.bytes.copy(b, 0, 0, this.used);
      this.bytes = b;
    }
    this.used += this.bytes.write(s, this.used, 'utf8');
    this.ends.push(this.used);
  }
  addEmpty(): void {
    this.ends.push(this.used);
  }
  offsets32(): Int32Array {
    const o = new Int32Array(this.ends.length + 1);
    for (let i = 0; i < this.ends.length; i++) o[i + 1] = this.ends[i]!;
    return o;
  }
  offsets64(): BigInt64Array {
    const o = new BigInt64Array(this.ends.length + 1);
    for (let i = 0; i < this.ends.length; i++) o[i + 1] = BigInt(this.ends[i]!);
    return o;
  }
  data(): Uint8Array {
    return new Uint8Array(this.bytes.buffer, this.bytes.byteOffset, this.used);
  }
}

class LargeStringColumn implements ColumnBuilder {
  readonly type = new LargeUtf8();
  length = 0;
  private s = new StringBuilder();
  private valid = new Validity();
  push(v: unknown): void {
    if (v === null || v === undefined) {
      this.valid.set(this.length++, false);
      this.s.addEmpty();
    } else {
      this.valid.set(this.length++, true);
      this.s.add(v as string);
    }
  }
  padTo(n: number): void {
    if (n <= this.length) return;
    this.valid.nullsAt(this.length, n - this.length);
    for (let i = this.length; i < n; i++) this.s.addEmpty();
    this.length = n;
  }
  finish(): Data {
    return makeData({ type: this.type, length: this.length, nullCount: this.valid.nulls, nullBitmap: this.valid.bitmap(this.length), valueOffsets: this.s.offsets64(), data: this.s.data() });
  }
}

class DictColumn implements ColumnBuilder {
  length = 0;
  private ids = new Int32Array(1024);
  private index = new Map<string, number>();
  private values = new StringBuilder();
  private valid = new Validity();
  constructor(readonly type: Dictionary<Utf8, Int32>) {}
  push(v: unknown): void {
    this.ids = grow(this.ids, this.length + 1);
    if (v === null || v === undefined) {
      this.valid.set(this.length++, false);
      return;
    }
    let id = this.index.get(v as string);
    if (id === undefined) {
      id = this.index.size;
      this.index.set(v as string, id);
      this.values.add(v as string);
    }
    this.valid.set(this.length, true);
    this.ids[this.length++] = id;
  }
  padTo(n: number): void {
    if (n <= this.length) return;
    this.ids = grow(this.ids, n);
    this.valid.nullsAt(this.length, n - this.length);
    this.length = n;
  }
  finish(): Data {
    const dict = makeData({ type: new Utf8(), length: this.index.size, nullCount: 0, valueOffsets: this.values.offsets32(), data: this.values.data() });
    return makeData({
      type: this.type, length: this.length, nullCount: this.valid.nulls, nullBitmap: this.valid.bitmap(this.length),
      data: this.ids.subarray(0, this.length), dictionary: makeVector(dict),
    });
  }
}

const HEX16 = /^[0-9a-f]{16}$/;

/** 64-bit unsigned values; input is a bigint (or null). */
export class U64Column implements ColumnBuilder {
  readonly type = new Uint64();
  length = 0;
  private vals = new BigInt64Array(1024);
  private words = new Uint32Array(this.vals.buffer);
  private valid = new Validity();
  push(v: unknown): void {
    this.reserve();
    if (v === null || v === undefined) this.valid.set(this.length++, false);
    else {
      this.valid.set(this.length, true);
      this.vals[this.length++] = BigInt.asIntN(64, v as bigint);
    }
  }
  /** A 16-hex span id, written as two 32-bit words (no BigInt on the hot path). */
  pushHex(hex: string | null | undefined, field: string): void {
    this.reserve();
    if (hex === null || hex === undefined) return this.valid.set(this.length++, false);
    if (!HEX16.test(hex)) throw new Error(`${field}: not 16 lower-case hex digits: ${JSON.stringify(hex)}`);
    this.valid.set(this.length, true);
    const i = this.length++ * 2;
    // little-endian: low word first
    this.words[i] = parseInt(hex.slice(8), 16);
    this.words[i + 1] = parseInt(hex.slice(0, 8), 16);
  }
  private reserve(n = this.length + 1): void {
    if (n > this.vals.length) {
      this.vals = grow(this.vals, n);
      this.words = new Uint32Array(this.vals.buffer);
    }
  }
  padTo(n: number): void {
    if (n <= this.length) return;
    this.reserve(n);
    this.valid.nullsAt(this.length, n - this.length);
    this.length = n;
  }
  finish(): Data {
    const u = new BigUint64Array(this.vals.buffer, 0, this.length);
    return makeData({ type: this.type, length: this.length, nullCount: this.valid.nulls, nullBitmap: this.valid.bitmap(this.length), data: u });
  }
}

/** Timestamp(ns): same storage as U64, input bigint. */
class TsColumn implements ColumnBuilder {
  readonly type = new TimestampNanosecond();
  length = 0;
  private vals = new BigInt64Array(1024);
  private valid = new Validity();
  push(v: unknown): void {
    this.vals = grow(this.vals, this.length + 1);
    if (v === null || v === undefined) this.valid.set(this.length++, false);
    else {
      this.valid.set(this.length, true);
      this.vals[this.length++] = v as bigint;
    }
  }
  padTo(n: number): void {
    if (n <= this.length) return;
    this.vals = grow(this.vals, n);
    this.valid.nullsAt(this.length, n - this.length);
    this.length = n;
  }
  finish(): Data {
    // Timestamp data is stored as pairs of 32-bit words in arrow JS.
    const words = new Int32Array(this.vals.buffer, 0, this.length * 2);
    return makeData({ type: this.type, length: this.length, nullCount: this.valid.nulls, nullBitmap: this.valid.bitmap(this.length), data: words });
  }
}

class Int32Column implements ColumnBuilder {
  length = 0;
  private vals: Int32Array | Uint32Array;
  private valid = new Validity();
  private readonly min: number;
  private readonly max: number;
  constructor(readonly type: Int32 | Uint32, private readonly name: string) {
    this.vals = type instanceof Uint32 ? new Uint32Array(1024) : new Int32Array(1024);
    [this.min, this.max] = type instanceof Uint32 ? [0, 0xffffffff] : [-0x80000000, 0x7fffffff];
  }
  push(v: unknown): void {
    this.vals = grow(this.vals, this.length + 1);
    if (v === null || v === undefined) this.valid.set(this.length++, false);
    else {
      // a typed array would wrap it (-1 as 4294967295) into a value no reader gets back
      if (typeof v !== 'number' || !Number.isInteger(v) || v < this.min || v > this.max)
        throw new Error(`${this.name}: ${JSON.stringify(v)} does not fit the layout's ${this.type instanceof Uint32 ? 'UInt32' : 'Int32'} column`);
      this.valid.set(this.length, true);
      this.vals[this.length++] = v as number;
    }
  }
  padTo(n: number): void {
    if (n <= this.length) return;
    this.vals = grow(this.vals, n);
    this.valid.nullsAt(this.length, n - this.length);
    this.length = n;
  }
  finish(): Data {
    return makeData({ type: this.type as Int32, length: this.length, nullCount: this.valid.nulls, nullBitmap: this.valid.bitmap(this.length), data: this.vals.subarray(0, this.length) as Int32Array });
  }
}

class BoolColumn implements ColumnBuilder {
  readonly type = new Bool();
  length = 0;
  private bits = new Uint8Array(128);
  private valid = new Validity();
  push(v: unknown): void {
    this.bits = grow(this.bits, (this.length >> 3) + 1);
    if (v === null || v === undefined) this.valid.set(this.length++, false);
    else {
      this.valid.set(this.length, true);
      if (v) this.bits[this.length >> 3]! |= 1 << (this.length & 7);
      this.length++;
    }
  }
  padTo(n: number): void {
    if (n <= this.length) return;
    this.bits = grow(this.bits, (n >> 3) + 1);
    this.valid.nullsAt(this.length, n - this.length);
    this.length = n;
  }
  finish(): Data {
    const data = this.bits.subarray(0, (this.length + 7) >> 3);
    return makeData({ type: this.type, length: this.length, nullCount: this.valid.nulls, nullBitmap: this.valid.bitmap(this.length), data });
  }
}

/** A builder for a column of `type`; `name`: the column, as a value that does not fit names it. */
export function columnBuilder(type: DataType, name: string): ColumnBuilder {
  if (type instanceof Dictionary) return new DictColumn(type as Dictionary<Utf8, Int32>);
  if (type instanceof LargeUtf8) return new LargeStringColumn();
  if (type instanceof Uint64) return new U64Column();
  if (type instanceof TimestampNanosecond) return new TsColumn();
  if (type instanceof Uint32 || type instanceof Int32) return new Int32Column(type, name);
  if (type instanceof Bool) return new BoolColumn();
  throw new Error(`no builder for ${String(type)}`);
}

/** Struct column whose children are pushed individually; the struct itself is never null here. */
export function structData(type: Struct, length: number, children: Data[]): Data {
  return makeData({ type, length, nullCount: 0, children });
}

/** List column from per-row item counts (-1 = null row) and the child data. */
export function listData(type: List, counts: number[], child: Data): Data {
  const offsets = new Int32Array(counts.length + 1);
  const valid = new Validity();
  for (let i = 0; i < counts.length; i++) {
    const c = counts[i]!;
    valid.set(i, c >= 0);
    offsets[i + 1] = offsets[i]! + Math.max(0, c);
  }
  return makeData({ type, length: counts.length, nullCount: valid.nulls, nullBitmap: valid.bitmap(counts.length), valueOffsets: offsets, child });
}

export { Field, Struct, List };
