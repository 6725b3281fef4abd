import type BetterSqlite3 from 'better-sqlite3';
import type { Store } from '../store/sqlite/open.js';
import { isArray, isObject, type JsonObject, type JsonValue } from '../py/json-value.js';

const MEDIA = '__harness_external_media__';
const TEXT = '__harness_external_text__';
const URI = '__harness_external_uri__';
const ESCAPED = '__harness_external_escaped_keys__';
const FORMAT = '__harness_external_marker_format__';
const RESERVED = new Set([MEDIA, TEXT, URI, ESCAPED, FORMAT]);
const URI_PREFIX = 'media+sha256://';
const SHA256_HEX = /^[0-9a-f]{64}$/;

/** Raised when a snapshot's externalized media cannot be restored; the snapshot is then skipped. */
export class MediaRestoreError extends Error {}

/** Looks up media bytes by sha256 (prepared once, cached per digest: snapshots repeat markers). */
export class MediaLookup {
  private readonly stmt: BetterSqlite3.Statement | null;
  private readonly cache = new Map<string, Buffer | null>();

  constructor(store: Store) {
    this.stmt = store.schema.hasMedia ? store.db.prepare('SELECT bytes FROM media WHERE sha256 = ?') : null;
  }

  get(sha: string): Buffer | null {
    let hit = this.cache.get(sha);
    if (hit === undefined) {
      const row = this.stmt?.get(sha) as { bytes: unknown } | undefined;
      const b = row?.bytes;
      hit = Buffer.isBuffer(b) ? b : typeof b === 'string' ? Buffer.from(b, 'utf8') : null;
      this.cache.set(sha, hit);
    }
    return hit;
  }
}

/** Quick test on the raw row text so that snapshots without markers are never walked. */
export function mayHaveMarkers(rawJson: string): boolean {
  return rawJson.includes(MEDIA);
}

/** Python's `bytes.decode('utf-8', 'surrogatepass')`: UTF-8, plus encoded lone surrogates (ED A0..BF xx). */
export function decodeUtf8SurrogatePass(bytes: Buffer): string {
  const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  let hasEncodedSurrogate = false;
  for (let i = bytes.indexOf(0xed); i >= 0 && i + 1 < bytes.length; i = bytes.indexOf(0xed, i + 1)) {
    if (bytes[i + 1]! >= 0xa0 && bytes[i + 1]! <= 0xbf) {
      hasEncodedSurrogate = true;
      break;
    }
  }
  if (!hasEncodedSurrogate) {
    try {
      return strict.decode(bytes);
    } catch {
      throw new MediaRestoreError('externalized text is not valid UTF-8');
    }
  }
  let out = '';
  let start = 0;
  for (let i = 0; i + 2 < bytes.length; i++) {
    if (bytes[i] === 0xed && bytes[i + 1]! >= 0xa0 && bytes[i + 1]! <= 0xbf && (bytes[i + 2]! & 0xc0) === 0x80) {
      try {
        out += strict.decode(bytes.subarray(start, i));
      } catch {
        throw new MediaRestoreError('externalized text is not valid UTF-8');
      }
      out += String.fromCharCode(0xd000 | ((bytes[i + 1]! & 0x3f) << 6) | (bytes[i + 2]! & 0x3f));
      i += 2;
      start = i + 1;
    }
  }
  try {
    return out + strict.decode(bytes.subarray(start));
  } catch {
    throw new MediaRestoreError('externalized text is not valid UTF-8');
  }
}

function describe(v: JsonValue | undefined): string {
  return typeof v === 'string' ? JSON.stringify(v) : String(v);
}

function restoreMarker(node: JsonObject, media: MediaLookup): JsonObject {
  let uri: string;
  const explicit = node.get(URI);
  const plain = node.get('uri');
  const out: JsonObject = new Map(node);
  if (explicit !== undefined) {
    if (typeof explicit !== 'string') throw new MediaRestoreError(`not a media URI: ${describe(explicit)}`);
    uri = explicit;
    if (plain === explicit) out.delete('uri');
  } else if (typeof plain === 'string') {
    uri = plain;
    out.delete('uri');
  } else {
    throw new MediaRestoreError('externalized media marker has no URI');
  }
  if (!uri.startsWith(URI_PREFIX)) throw new MediaRestoreError(`not a media URI: ${JSON.stringify(uri)}`);
  const sha = uri.slice(URI_PREFIX.length);
  if (!SHA256_HEX.test(sha)) throw new MediaRestoreError(`invalid sha256 digest in ${JSON.stringify(uri)}`);

  const format = node.get(FORMAT);
  const stash = node.get(ESCAPED);
  const honoured =
    typeof format === 'string' &&
    format.startsWith('escaped-keys-v') &&
    isObject(stash) &&
    stash.size > 0 &&
    [...stash.keys()].every((k) => RESERVED.has(k));
  if (honoured && format !== 'escaped-keys-v1') {
    throw new MediaRestoreError(`externalized media marker has an unsupported escaped-keys format: ${JSON.stringify(format)}`);
  }
  const bytes = media.get(sha);
  if (!bytes) throw new MediaRestoreError(`media row ${sha} is missing`);
  const isText = node.get(TEXT) === true;
  for (const k of RESERVED) out.delete(k);
  if (isText) out.set('content', decodeUtf8SurrogatePass(bytes));
  else out.set('data', bytes.toString('base64'));
  if (honoured) for (const [k, v] of stash) out.set(k, v);
  return out;
}

/** Reverses media externalization (spec §1.6) anywhere in a snapshot's JSON tree. */
export function restoreMedia(value: JsonValue, media: MediaLookup): JsonValue {
  if (isArray(value)) {
    let changed: JsonValue[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const r = restoreMedia(value[i]!, media);
      if (r !== value[i]) (changed ??= value.slice())[i] = r;
    }
    return changed ?? value;
  }
  if (!isObject(value)) return value;
  const node = value.get(MEDIA) === true ? restoreMarker(value, media) : value;
  let changed: JsonObject | null = node === value ? null : node;
  for (const [k, v] of node) {
    const r = restoreMedia(v, media);
    if (r !== v) (changed ??= new Map(node)).set(k, r);
  }
  return changed ?? value;
}
