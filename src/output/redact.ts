/**
 * Redaction of store text for export: each match of the patterns becomes `[redacted]`, and the matches
 * are counted. In JSON text only string values change (never keys, numbers or punctuation): each is
 * decoded first (a pattern sees the real characters, not their escapes) and, when it changed, written
 * back as Python's `json.dumps` writes a string (ASCII, `\uXXXX` escapes), so the result is valid JSON.
 */

export const REDACTED = '[redacted]';

/** Named pattern sets for `--redact-preset`. Each keeps what identifies the kind (`Bearer `, the URL's user) and hides the secret. */
export const REDACT_PRESETS: Readonly<Record<string, readonly string[]>> = {
  secrets: [
    // API keys with a known prefix: OpenAI/Anthropic, AWS, GitHub, Slack, Google
    String.raw`\bsk-[A-Za-z0-9_-]{16,}`,
    String.raw`\bAKIA[0-9A-Z]{16}\b`,
    String.raw`\bgh[pousr]_[A-Za-z0-9]{20,}`,
    String.raw`\bgithub_pat_[A-Za-z0-9_]{20,}`,
    String.raw`\bxox[abprs]-[A-Za-z0-9-]{10,}`,
    String.raw`\bAIza[0-9A-Za-z_-]{35}`,
    // bearer tokens (the word stays; a token has a digit, so "bearer authentication" is left alone)
    String.raw`(?<=\b[Bb]earer\s+)(?=[A-Za-z0-9._~+/=-]*[0-9])[A-Za-z0-9._~+/=-]{8,}`,
    // the password of a URL's user info (scheme://user:password@host)
    String.raw`(?<=\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/:@]*:)[^\s/@]+(?=@)`,
    // e-mail addresses
    String.raw`[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}`,
  ],
};

/** A pattern that cannot be used (does not compile, matches the empty string, or names no preset). */
export class RedactPatternError extends Error {}

/** JSON as Python's `json.dumps` (ensure_ascii) writes it, in the style of the stored JSON: non-ASCII as `\uXXXX`. */
export function asciiJson(v: unknown): string {
  return JSON.stringify(v).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

export class Redactor {
  /** Redactions made so far. */
  count = 0;
  private readonly patterns: RegExp[];

  /** `sources` are regular expressions (JavaScript syntax, case-sensitive); `presets` names of {@link REDACT_PRESETS}, applied first. */
  constructor(sources: readonly string[] = [], presets: readonly string[] = []) {
    const all: string[] = [];
    for (const p of presets) {
      const set = REDACT_PRESETS[p];
      if (!set || !Object.hasOwn(REDACT_PRESETS, p))
        throw new RedactPatternError(`unknown redaction preset '${p}' (known: ${Object.keys(REDACT_PRESETS).join(', ')})`);
      all.push(...set);
    }
    all.push(...sources);
    this.patterns = all.map((src) => {
      let re: RegExp;
      try {
        re = new RegExp(src, 'g');
      } catch (e) {
        throw new RedactPatternError(`bad --redact pattern: ${(e as Error).message}`);
      }
      // it would put a mark between every two characters
      if (new RegExp(`^(?:${src})$`).test('')) throw new RedactPatternError(`--redact pattern /${src}/ matches the empty string`);
      return re;
    });
  }

  get active(): boolean {
    return this.patterns.length > 0;
  }

  /**
   * `text` with every match replaced by `[redacted]`. The patterns apply in turn, each only to the text
   * the earlier ones left (never to a mark, so no match is counted twice or split open).
   */
  text(text: string): string {
    if (!this.active) return text;
    // pieces of the text; odd indexes are marks
    let pieces = [text];
    for (const re of this.patterns) {
      const next: string[] = [];
      for (let i = 0; i < pieces.length; i++) {
        const piece = pieces[i]!;
        if (i % 2 === 1) {
          next.push(piece);
          continue;
        }
        let from = 0;
        for (const m of piece.matchAll(re)) {
          if (m[0].length === 0) continue;
          next.push(piece.slice(from, m.index), REDACTED);
          from = m.index + m[0].length;
          this.count++;
        }
        next.push(piece.slice(from));
      }
      pieces = next;
    }
    return pieces.length === 1 ? text : pieces.join('');
  }

  /**
   * JSON text with its string values redacted. Everything else is kept byte for byte, strings that do
   * not change included. Object keys are never changed.
   */
  json(text: string): string {
    if (!this.active) return text;
    let out = '';
    let copied = 0;
    let i = 0;
    const n = text.length;
    while (i < n) {
      if (text.charCodeAt(i) !== 34) {
        i++;
        continue;
      }
      const start = i++;
      while (i < n) {
        const c = text.charCodeAt(i);
        if (c === 92) i += 2;
        else if (c === 34) break;
        else i++;
      }
      const end = ++i; // just past the closing quote
      let k = end;
      while (k < n && ' \t\r\n'.includes(text[k]!)) k++;
      if (text[k] === ':') continue; // a key
      const token = text.slice(start, end);
      let value: string;
      try {
        value = token.includes('\\') ? (JSON.parse(token) as string) : token.slice(1, -1);
      } catch {
        continue; // not a JSON string: left as it is
      }
      const redacted = this.text(value);
      if (redacted === value) continue;
      out += text.slice(copied, start) + asciiJson(redacted);
      copied = end;
    }
    return copied === 0 ? text : out + text.slice(copied);
  }
}
