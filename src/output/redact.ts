/**
 * Redaction of store text for export and report: each match of the patterns becomes `[redacted]`, and
 * the matches are counted. In JSON text only string values change (never keys, numbers or punctuation),
 * each decoded first (a pattern matching across an escape sees the real characters) and re-encoded, so
 * the result is still valid JSON.
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
    // bearer tokens (the word stays)
    String.raw`(?<=\bBearer\s+)[A-Za-z0-9._~+/=-]{8,}`,
    // the password of a URL's user info (scheme://user:password@host)
    String.raw`(?<=\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/:@]*:)[^\s/@]+(?=@)`,
    // e-mail addresses
    String.raw`[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}`,
  ],
};

/** A pattern that cannot be used (does not compile, or matches the empty string). */
export class RedactPatternError extends Error {}

export class Redactor {
  /** Redactions made so far. */
  count = 0;
  private readonly patterns: RegExp[];

  /** `sources` are regular expressions (JavaScript syntax, applied globally); `presets` names of {@link REDACT_PRESETS}. */
  constructor(sources: readonly string[] = [], presets: readonly string[] = []) {
    const all: string[] = [];
    for (const p of presets) {
      const set = REDACT_PRESETS[p];
      if (!set) throw new RedactPatternError(`unknown redaction preset '${p}' (known: ${Object.keys(REDACT_PRESETS).join(', ')})`);
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
      // an empty match would put a mark between every two characters
      if (new RegExp(`^(?:${src})$`).test('')) throw new RedactPatternError(`--redact pattern /${src}/ matches the empty string`);
      return re;
    });
  }

  get active(): boolean {
    return this.patterns.length > 0;
  }

  /** `text` with every match of every pattern (in order) replaced by `[redacted]`. */
  text(text: string): string {
    let out = text;
    for (const re of this.patterns) {
      re.lastIndex = 0;
      out = out.replace(re, () => {
        this.count++;
        return REDACTED;
      });
    }
    return out;
  }

  /**
   * JSON text with its string values redacted. Everything else is kept byte for byte, strings that do
   * not change included; a changed string is written back with JSON's own escaping. Keys are left alone.
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
      while (k < n && /\s/.test(text[k]!)) k++;
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
      out += text.slice(copied, start) + JSON.stringify(redacted);
      copied = end;
    }
    return copied === 0 ? text : out + text.slice(copied);
  }
}
