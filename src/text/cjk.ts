/**
 * The `cjk` tokenizer (off-parity: the reference has only `\w+`). Words come from `Intl.Segmenter`;
 * Hangul runs, which ICU does not break inside (it has no Korean dictionary), and Han/Kana runs when
 * this Node's ICU cannot segment Japanese/Chinese, become overlapping bigrams. Each token is NFKC-folded
 * (half-width Katakana to full-width, full-width Latin to ASCII) and lowercased. Tokens repeat as often
 * as they occur: term frequency is kept.
 */

// by script extension: the prolonged sound mark `ー` and the half-width voicing marks `ﾞ ﾟ` are Kana there
// (made on first use, as every pattern with a `\p{…}` class: see tokenPattern)
let scripts: { readonly hangul: RegExp; readonly hanKana: RegExp; readonly mark: RegExp } | undefined;
const patterns = (): NonNullable<typeof scripts> =>
  (scripts ??= {
    hangul: /\p{Script_Extensions=Hangul}/u,
    hanKana: /[\p{Script_Extensions=Han}\p{Script_Extensions=Hiragana}\p{Script_Extensions=Katakana}]/u,
    mark: /\p{M}/u,
  });

/**
 * The word segmenter, and whether ICU here has the dictionary that segments Japanese and Chinese (full
 * ICU does; small-icu does not). Made on first use: making it loads ICU's break data (~10 ms), which
 * every command would pay at start while only the `cjk` tokenizer needs it.
 */
let words: { readonly segmenter: Intl.Segmenter; readonly dictionary: boolean } | null = null;
function wordSegmenter(): { readonly segmenter: Intl.Segmenter; readonly dictionary: boolean } {
  if (words === null) {
    const dictionary = Intl.Segmenter.supportedLocalesOf(['ja', 'zh']).length === 2;
    words = { segmenter: new Intl.Segmenter(dictionary ? 'ja' : 'und', { granularity: 'word' }), dictionary };
  }
  return words;
}

/** 1: Hangul; 2: Han or Kana; 0: anything else. */
function runKind(ch: string): number {
  const { hangul, hanKana } = patterns();
  if (hangul.test(ch)) return 1;
  return hanKana.test(ch) ? 2 : 0;
}

const fold = (s: string): string => s.normalize('NFKC').toLowerCase();

/** Visits each token with its UTF-16 span in `text`, in order. */
export function forEachCjkSpan(text: string, visit: (token: string, start: number, end: number) => boolean | void): void {
  const { segmenter, dictionary } = wordSegmenter();
  for (const seg of segmenter.segment(text)) {
    if (!seg.isWordLike) continue;
    const chars = [...seg.segment];
    let at = seg.index;
    for (let i = 0; i < chars.length; ) {
      const kind = runKind(chars[i]!);
      let j = i + 1;
      // a combining mark stays with the character it marks
      while (j < chars.length && (runKind(chars[j]!) === kind || patterns().mark.test(chars[j]!))) j++;
      const run = chars.slice(i, j);
      const width = run.join('').length;
      if ((kind === 1 || (kind === 2 && !dictionary)) && run.length > 2) {
        // a run the segmenter leaves whole: every two adjacent characters are a token
        let s = at;
        for (let k = 0; k + 1 < run.length; k++) {
          const pair = run[k]! + run[k + 1]!;
          if (visit(fold(pair), s, s + pair.length) === true) return;
          s += run[k]!.length;
        }
      } else if (visit(fold(run.join('')), at, at + width) === true) return;
      at += width;
      i = j;
    }
  }
}

/** Visits each token in order and returns how many there were (the shape of `forEachToken`). */
export function forEachCjkToken(text: string, visit: (token: string) => void): number {
  let count = 0;
  forEachCjkSpan(text, (t) => {
    count++;
    visit(t);
  });
  return count;
}
