/**
 * HTML text from store text: every character that could open markup or leave an attribute is an entity,
 * and characters HTML cannot carry (controls, lone surrogates) become visible escapes, so a stored
 * `<script>` or `"><img src=…>` is only ever text.
 */
export function escapeHtml(text: string): string {
  let out = '';
  for (const ch of text) {
    const c = ch.codePointAt(0)!;
    if (ch === '&') out += '&amp;';
    else if (ch === '<') out += '&lt;';
    else if (ch === '>') out += '&gt;';
    else if (ch === '"') out += '&quot;';
    else if (ch === "'") out += '&#39;';
    else if (ch === '\n' || ch === '\t') out += ch;
    else if (c < 0x20 || (c >= 0x7f && c < 0xa0)) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else if (c >= 0xd800 && c <= 0xdfff) out += `\\u${c.toString(16)}`;
    else out += ch;
  }
  return out;
}

/** An id attribute value for a run's section: only [A-Za-z0-9_-], the rest hex-coded, so any run id makes a safe, unique anchor. */
export function anchorId(prefix: string, key: string): string {
  let out = prefix;
  for (const ch of key) out += /^[A-Za-z0-9_-]$/.test(ch) ? ch : `.${ch.codePointAt(0)!.toString(16)}.`;
  return out;
}
