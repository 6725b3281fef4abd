/** Python's `re.findall(r'\w+', text)` on str, then `str.lower()` per token (spec §5.1). */
export const TOKEN_PATTERN = /[\p{L}\p{N}_]+/gu;

export function tokenize(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(TOKEN_PATTERN)) out.push(m[0].toLowerCase());
  return out;
}

/** Query tokens deduplicated, first occurrence kept (spec §5.2). */
export function queryTokens(query: string): string[] {
  return [...new Set(tokenize(query))];
}
