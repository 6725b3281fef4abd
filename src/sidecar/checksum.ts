import { crc32 } from 'node:zlib';
import { IndexDamagedError } from './errors.js';

/** A column value as the index stores it. */
export type RowValue = string | number | null | Uint8Array;

/**
 * CRC-32 of a row's values, stored with the row and checked whenever it is read back: random damage
 * (a flipped bit, a torn or truncated page) is caught before anything derived from the row is used.
 * It guards against accidents, not against someone who can write the private index file.
 */
export function rowSum(values: readonly RowValue[]): number {
  let text = '';
  let c = 0;
  for (const v of values) {
    if (v instanceof Uint8Array) {
      // an empty blob read back from SQLite has no data pointer, and zlib's crc32 of a null buffer is 0,
      // whatever the running value: only bytes are folded in
      if (v.length > 0) c = crc32(v, c);
      text += `\u0003${v.length}\u0001`;
    } else text += v === null ? '\u0002\u0001' : typeof v === 'number' ? `n${v}\u0001` : `s${v}\u0001`;
  }
  return crc32(text, c);
}

/** Throws IndexDamagedError unless `sum` is the checksum of `values`. */
export function verifyRow(table: string, values: readonly RowValue[], sum: unknown): void {
  if (rowSum(values) !== sum) throw new IndexDamagedError(`a ${table} row fails its checksum`);
}
