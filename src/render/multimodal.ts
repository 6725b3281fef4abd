import type { JsonObject, JsonValue } from '../py/json-value.js';
import { pyRepr, pyReprWith } from '../py/repr.js';

const URL_CLASSES: Record<string, string> = {
  'image-url': 'ImageUrl',
  'audio-url': 'AudioUrl',
  'document-url': 'DocumentUrl',
  'video-url': 'VideoUrl',
};

/**
 * pydantic-ai re-hydrates such a dict inside tool-return content into a multimodal object (spec §1.5).
 * Own keys only: `kind in` would take `toString` or `constructor` from Object.prototype.
 */
export function isMultimodal(v: JsonObject): boolean {
  const kind = v.get('kind');
  if (typeof kind !== 'string' || !(kind === 'binary' || kind === 'uploaded-file' || Object.hasOwn(URL_CLASSES, kind))) return false;
  return v.has('url') || v.has('media_type') || v.has('file_id');
}

/** Python `repr(bytes)`. */
export function pyBytesRepr(bytes: Uint8Array): string {
  let hasSingle = false;
  let hasDouble = false;
  for (const b of bytes) {
    if (b === 0x27) hasSingle = true;
    else if (b === 0x22) hasDouble = true;
  }
  const quote = hasSingle && !hasDouble ? '"' : "'";
  let out = 'b' + quote;
  for (const b of bytes) {
    if (b === 0x5c) out += '\\\\';
    else if (b === 0x27 && quote === "'") out += "\\'";
    else if (b === 0x09) out += '\\t';
    else if (b === 0x0a) out += '\\n';
    else if (b === 0x0d) out += '\\r';
    else if (b >= 0x20 && b < 0x7f) out += String.fromCharCode(b);
    else out += '\\x' + b.toString(16).padStart(2, '0');
  }
  return out + quote;
}

function decodeBase64Any(data: string): Buffer {
  return Buffer.from(data.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
}

/** The dataclass "no defaults" repr pydantic-ai gives multimodal objects: only non-default fields. */
function multimodalRepr(v: JsonObject): string {
  const kind = v.get('kind') as string;
  const fields: string[] = [];
  const add = (name: string, value: JsonValue | undefined): void => {
    if (value !== undefined && value !== null) fields.push(`${name}=${pyRepr(value)}`);
  };
  let cls: string;
  if (kind === 'binary') {
    const mediaType = v.get('media_type');
    cls = typeof mediaType === 'string' && mediaType.startsWith('image/') ? 'BinaryImage' : 'BinaryContent';
    const data = v.get('data');
    fields.push(`data=${pyBytesRepr(typeof data === 'string' ? decodeBase64Any(data) : new Uint8Array())}`);
    add('media_type', mediaType);
    add('vendor_metadata', v.get('vendor_metadata'));
  } else if (kind === 'uploaded-file') {
    cls = 'UploadedFile';
    add('file_id', v.get('file_id'));
    add('provider_name', v.get('provider_name'));
    add('vendor_metadata', v.get('vendor_metadata'));
    add('_media_type', v.get('media_type'));
  } else {
    cls = URL_CLASSES[kind]!;
    add('url', v.get('url'));
    if (v.get('force_download') === true) fields.push('force_download=True');
    add('vendor_metadata', v.get('vendor_metadata'));
    add('_media_type', v.get('media_type'));
  }
  add('_identifier', v.get('identifier'));
  return `${cls}(${fields.join(', ')})`;
}

/** Python `repr()` of tool-return content after pydantic-ai validation: multimodal dicts become objects. */
export function toolContentRepr(v: JsonValue): string {
  // iterative (store content may nest thousands of levels deep)
  return pyReprWith(v, (m) => (isMultimodal(m) ? multimodalRepr(m) : null));
}

/** Python `str()` of tool-return content. */
export function toolContentStr(v: JsonValue): string {
  return typeof v === 'string' ? v : toolContentRepr(v);
}
