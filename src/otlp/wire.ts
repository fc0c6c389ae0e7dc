/**
 * A minimal protobuf wire-format reader for the receiver's hot path. protobufjs builds a message
 * object per KeyValue and AnyValue (about 40 µs a span); reading the wire directly lets the
 * receiver write each span's columns without building objects it would throw away.
 */
export class WireError extends Error {}

export class Wire {
  pos: number;
  constructor(
    readonly buf: Buffer,
    start = 0,
    readonly end = buf.length,
  ) {
    this.pos = start;
  }

  /** varint up to 32 bits (tags, lengths, enums, bools); higher bits are read and dropped */
  uint32(): number {
    const b = this.buf;
    let v = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      if (this.pos >= this.end) throw new WireError('truncated varint');
      const c = b[this.pos++]!;
      v |= (c & 0x7f) << shift;
      if (c < 0x80) return v >>> 0;
    }
    // the rest of a 64-bit varint (negative enums): skip it
    for (let i = 0; i < 5; i++) {
      if (this.pos >= this.end) throw new WireError('truncated varint');
      if (this.buf[this.pos++]! < 0x80) return v >>> 0;
    }
    throw new WireError('varint too long');
  }

  /** varint as a signed 64-bit integer */
  int64(): bigint {
    let v = 0n;
    let shift = 0n;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new WireError('truncated varint');
      const c = this.buf[this.pos++]!;
      v |= BigInt(c & 0x7f) << shift;
      if (c < 0x80) return BigInt.asIntN(64, v);
      shift += 7n;
    }
    throw new WireError('varint too long');
  }

  /** a small non-negative varint as a number without BigInt (the common case of int64 values) */
  smallInt64(): number | bigint {
    const start = this.pos;
    const b = this.buf;
    let v = 0;
    for (let i = 0; i < 4 && this.pos < this.end; i++) {
      const c = b[this.pos++]!;
      v += (c & 0x7f) * 2 ** (7 * i);
      if (c < 0x80) return v;
    }
    this.pos = start;
    return this.int64();
  }

  fixed64(): bigint {
    if (this.pos + 8 > this.end) throw new WireError('truncated fixed64');
    const v = this.buf.readBigUInt64LE(this.pos);
    this.pos += 8;
    return v;
  }

  double(): number {
    if (this.pos + 8 > this.end) throw new WireError('truncated double');
    const v = this.buf.readDoubleLE(this.pos);
    this.pos += 8;
    return v;
  }

  /** a length-delimited field: returns its end and leaves pos at its start */
  sub(): number {
    const len = this.uint32();
    const end = this.pos + len;
    if (end > this.end) throw new WireError('truncated field');
    return end;
  }

  string(): string {
    const end = this.sub();
    const s = this.buf.toString('utf8', this.pos, end);
    this.pos = end;
    return s;
  }

  /** bytes as lower-case hex (ids) */
  hex(): string {
    const end = this.sub();
    const s = this.buf.toString('hex', this.pos, end);
    this.pos = end;
    return s;
  }

  /**
   * An 8-byte id as an unsigned integer; null when empty, all zero ("none") or of another length
   * (which OTLP does not allow).
   */
  id64(): bigint | null {
    const end = this.sub();
    const start = this.pos;
    this.pos = end;
    if (end - start !== 8) return null;
    const v = this.buf.readBigUInt64BE(start);
    return v === 0n ? null : v;
  }

  base64(): string {
    const end = this.sub();
    const s = this.buf.toString('base64', this.pos, end);
    this.pos = end;
    return s;
  }

  skip(wireType: number): void {
    switch (wireType) {
      case 0:
        this.uint32();
        return;
      case 1:
        this.pos += 8;
        break;
      case 2:
        this.pos = this.sub();
        return;
      case 5:
        this.pos += 4;
        break;
      default:
        throw new WireError(`unsupported wire type ${wireType}`);
    }
    if (this.pos > this.end) throw new WireError('truncated field');
  }
}
