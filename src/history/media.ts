import { isArray, isObject, type JsonObject, type JsonValue } from '../py/json-value.js';
import { decodeUtf8SurrogatePass } from '../py/utf8.js';
import type { StoreReader } from '../store/reader.js';

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

/**
 * Media bytes by sha256 from the store, cached per digest (snapshots repeat the same markers, and the
 * store's answer for a digest cannot change during a read).
 */
export class MediaCache {
  private readonly cache = new Map<string, Buffer | null>();

  constructor(private readonly store: Pick<StoreReader, 'media'>) {}

  get(sha: string): Buffer | null {
    let hit = this.cache.get(sha);
    if (hit === undefined) {
      hit = this.store.media(sha);
      this.cache.set(sha, hit);
    }
    return hit;
  }
}

/** Quick test on the raw row text so that snapshots without markers are never walked. */
export function mayHaveMarkers(rawJson: string): boolean {
  return rawJson.includes(MEDIA);
}

function describe(v: JsonValue | undefined): string {
  return typeof v === 'string' ? JSON.stringify(v) : String(v);
}

function restoreMarker(node: JsonObject, media: MediaCache): JsonObject {
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
  if (isText) {
    const text = decodeUtf8SurrogatePass(bytes);
    if (text === null) throw new MediaRestoreError('externalized text is not valid UTF-8');
    out.set('content', text);
  } else out.set('data', bytes.toString('base64'));
  if (honoured) for (const [k, v] of stash) out.set(k, v);
  return out;
}

/** Reverses media externalization (spec §1.6) anywhere in a snapshot's JSON tree. */
export function restoreMedia(value: JsonValue, media: MediaCache): JsonValue {
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
