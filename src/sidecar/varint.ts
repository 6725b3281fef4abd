/** A growable byte buffer of unsigned LEB128 varints: the postings encoding. */
export class VarintWriter {
  private buf: Uint8Array;
  length = 0;

  constructor(capacity = 16) {
    this.buf = new Uint8Array(capacity);
  }

  write(n: number): void {
    if (this.length + 10 > this.buf.length) {
      const next = new Uint8Array(Math.max(this.buf.length * 2, this.length + 10));
      next.set(this.buf.subarray(0, this.length));
      this.buf = next;
    }
    while (n >= 0x80) {
      this.buf[this.length++] = (n & 0x7f) | 0x80;
      n = Math.floor(n / 128);
    }
    this.buf[this.length++] = n;
  }

  writeBytes(bytes: Uint8Array): void {
    if (this.length + bytes.length > this.buf.length) {
      const next = new Uint8Array(Math.max(this.buf.length * 2, this.length + bytes.length + 10));
      next.set(this.buf.subarray(0, this.length));
      this.buf = next;
    }
    this.buf.set(bytes, this.length);
    this.length += bytes.length;
  }

  bytes(): Buffer {
    return Buffer.from(this.buf.buffer, this.buf.byteOffset, this.length);
  }
}

/** Decodes a whole buffer of varints. */
export function readVarints(data: Uint8Array): number[] {
  const out: number[] = [];
  let n = 0;
  let shift = 1;
  for (let i = 0; i < data.length; i++) {
    const b = data[i]!;
    n += (b & 0x7f) * shift;
    if (b < 0x80) {
      out.push(n);
      n = 0;
      shift = 1;
    } else shift *= 128;
  }
  return out;
}
