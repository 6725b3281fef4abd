/**
 * Python's `bytes.decode('utf-8', 'surrogatepass')`: UTF-8, plus encoded lone surrogates (ED A0..BF xx).
 * Null when the bytes are not valid UTF-8 even so.
 */
export function decodeUtf8SurrogatePass(bytes: Uint8Array): string | null {
  const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  const decode = (part: Uint8Array): string | null => {
    try {
      return strict.decode(part);
    } catch {
      return null;
    }
  };
  let hasEncodedSurrogate = false;
  for (let i = bytes.indexOf(0xed); i >= 0 && i + 1 < bytes.length; i = bytes.indexOf(0xed, i + 1)) {
    if (bytes[i + 1]! >= 0xa0 && bytes[i + 1]! <= 0xbf) {
      hasEncodedSurrogate = true;
      break;
    }
  }
  if (!hasEncodedSurrogate) return decode(bytes);
  let out = '';
  let start = 0;
  for (let i = 0; i + 2 < bytes.length; i++) {
    if (bytes[i] === 0xed && bytes[i + 1]! >= 0xa0 && bytes[i + 1]! <= 0xbf && (bytes[i + 2]! & 0xc0) === 0x80) {
      const before = decode(bytes.subarray(start, i));
      if (before === null) return null;
      out += before + String.fromCharCode(0xd000 | ((bytes[i + 1]! & 0x3f) << 6) | (bytes[i + 2]! & 0x3f));
      i += 2;
      start = i + 1;
    }
  }
  const rest = decode(bytes.subarray(start));
  return rest === null ? null : out + rest;
}
