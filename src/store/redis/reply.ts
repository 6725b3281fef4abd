/**
 * A Redis reply as the reader receives it: read as bytes by the driver and decoded as strict UTF-8
 * (ioredis' string replies would replace invalid bytes silently, where upstream's `bytes.decode('utf-8')`
 * fails): a value that is not UTF-8 comes back as {@link INVALID_UTF8}.
 */

/** A decoded reply: strings, integers, null, arrays of these, or the marker of bytes that are not UTF-8. */
export type RedisReply = string | number | null | { readonly invalidUtf8: true } | RedisReply[];

export const INVALID_UTF8 = { invalidUtf8: true } as const;

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export function decode(reply: unknown): RedisReply {
  if (reply === null || reply === undefined) return null;
  if (typeof reply === 'number') return reply;
  if (Buffer.isBuffer(reply)) {
    try {
      return UTF8.decode(reply);
    } catch {
      return INVALID_UTF8;
    }
  }
  if (Array.isArray(reply)) return reply.map(decode);
  return String(reply);
}

/**
 * {@link decode} for a reply read once: each element of an array is let go (set to null) as soon as it
 * is decoded. The driver thread's young generation is small (store/drivers.ts); a page of buffers kept
 * whole while its strings are made outlived the collections the strings caused, was promoted, and was
 * freed only when 64 MB of such buffers had piled up (a build of the 613 MB store held them throughout).
 */
export function decodeOnce(reply: unknown): RedisReply {
  if (!Array.isArray(reply)) return decode(reply);
  const out = new Array<RedisReply>(reply.length);
  for (let i = 0; i < reply.length; i++) {
    out[i] = decodeOnce(reply[i]);
    reply[i] = null;
  }
  return out;
}
