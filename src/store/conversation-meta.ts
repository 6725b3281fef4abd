/**
 * What pydantic-ai-harness's conversation catalog says about a conversation (docs/backends.md,
 * "Conversation metadata"): `SqliteConversationStore` keeps one row per conversation id in a
 * `conversations` table, its `metadata` column the JSON of a `ConversationSummary`. convsearch shows
 * its title, tags and outcome; a field left out takes upstream's default, and a row upstream's own
 * validation would reject for these fields is reported, never shown.
 */

export interface ConversationMeta {
  readonly title: string;
  readonly tags: readonly string[];
  /** `ready`, `running`, `completed`, `failed` or `cancelled`. */
  readonly outcome: string;
}

const OUTCOMES = new Set(['ready', 'running', 'completed', 'failed', 'cancelled']);
/** `ConversationSummary`'s defaults. */
const DEFAULTS: ConversationMeta = { title: 'New session', tags: [], outcome: 'ready' };

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** A `metadata` column's value read as upstream reads it, or why it cannot be. */
export function parseConversationMeta(value: unknown): ConversationMeta | { readonly problem: string } {
  let text: string;
  if (typeof value === 'string') text = value;
  else if (Buffer.isBuffer(value)) {
    try {
      text = utf8.decode(value);
    } catch {
      return { problem: 'metadata is not UTF-8' };
    }
  } else return { problem: `metadata is ${value === null ? 'NULL' : typeof value}, not text` };
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return { problem: 'metadata is not JSON' };
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return { problem: 'metadata is not a JSON object' };
  const m = doc as Record<string, unknown>;
  // a key left out takes the default; a null one is wrong, as pydantic has it
  const field = (key: keyof ConversationMeta): unknown => (Object.hasOwn(m, key) ? m[key] : DEFAULTS[key]);
  const title = field('title');
  const tags = field('tags');
  const outcome = field('outcome');
  if (typeof title !== 'string') return { problem: 'title is not a string' };
  if (!Array.isArray(tags) || !tags.every((t) => typeof t === 'string')) return { problem: 'tags is not a list of strings' };
  if (typeof outcome !== 'string' || !OUTCOMES.has(outcome))
    return { problem: `outcome ${JSON.stringify(outcome)} is not one upstream writes` };
  return { title, tags: tags as string[], outcome };
}
