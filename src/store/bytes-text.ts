/** Bytes as a Python bytes literal would show them: printable ASCII as is, anything else `\xNN`. */
export function bytesText(raw: Buffer): string {
  let s = '';
  for (const b of raw) s += b >= 0x20 && b < 0x7f && b !== 0x5c ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, '0')}`;
  return s;
}
