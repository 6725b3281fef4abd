import { readVarints } from './varint.js';
import type { IndexTables, RunKeys } from './tables.js';

const KEY_BYTES = 20;

type Redo = [runKey: number, startAll: number, startConv: number];

/** The key rows of the runs at corpus positions `from .. to-1` (IndexTables.keysAt), counted in `read`. */
function* keysAt(t: IndexTables, from: number, to: number, read: { rows: number }): IterableIterator<RunKeys> {
  for (const run of t.keysAt(from, to)) {
    read.rows++;
    yield run;
  }
}

/** Runs after the first changed one at most this many: attributed within their conversations when they can be. */
const WITHIN_CONVERSATIONS_MAX = 8;

/**
 * The starts of the runs from `fromOrd` on, when each of them holds only keys that an earlier run of its
 * own conversation holds (a run that continues its conversation, as an appended one mostly does): then
 * both its starts are its whole record, since the keys are also in an earlier run of the store. Reads the
 * keys of those conversations' runs only; null when that cannot tell (a key that no earlier run of the
 * conversation holds, a run without a conversation, more runs than a few, or a list that disagrees with
 * the index): the store-wide scan decides.
 */
function withinConversations(
  t: IndexTables,
  runCount: number,
  fromOrd: number,
  rewritten: ReadonlySet<number>,
  conversations: ReadonlyArray<string | null>,
  read: { rows: number },
): Redo[] | null {
  if (conversations.length !== runCount || fromOrd <= 0 || runCount - fromOrd > WITHIN_CONVERSATIONS_MAX) return null;
  const later = [...keysAt(t, fromOrd, runCount, read)];
  const sets = new Map<string, Set<string>>();
  for (const run of later) {
    if (run.conversation_id === null || run.conversation_id !== conversations[run.ord]) return null;
    sets.set(run.conversation_id, new Set());
  }
  for (let ord = 0; ord < fromOrd; ord++) {
    const conv = conversations[ord];
    const set = conv === null || conv === undefined ? undefined : sets.get(conv);
    if (set === undefined) continue;
    for (const run of keysAt(t, ord, ord + 1, read)) {
      if (run.conversation_id !== conv) return null;
      for (let i = 0; i + KEY_BYTES <= run.keys.length; i += KEY_BYTES) set.add(run.keys.toString('latin1', i, i + KEY_BYTES));
    }
  }
  const redo: Redo[] = [];
  for (const run of later) {
    const set = sets.get(run.conversation_id!)!;
    const keys: string[] = [];
    for (let i = 0; i < run.keys.length; i += KEY_BYTES) keys.push(run.keys.toString('latin1', i, i + KEY_BYTES));
    if (!keys.every((k) => set.has(k))) return null;
    const n = keys.length;
    if (rewritten.has(run.run_key) || run.start_all !== n || run.start_conv !== n) redo.push([run.run_key, n, n]);
    for (const k of keys) set.add(k);
  }
  return redo;
}

/** The starts of the runs from `fromOrd` on, from the keys of every earlier run (see attribute). */
function storeWide(t: IndexTables, runCount: number, fromOrd: number, rewritten: ReadonlySet<number>, read: { rows: number }): Redo[] {
  const wanted = new Set<string>();
  const heads = new Set<number>();
  // from the first run (a build): no earlier run to scan, and no key set to hold twice
  for (const run of fromOrd > 0 ? keysAt(t, fromOrd, runCount, read) : []) {
    for (let i = 0; i + KEY_BYTES <= run.keys.length; i += KEY_BYTES) {
      wanted.add(run.keys.toString('latin1', i, i + KEY_BYTES));
      heads.add(run.keys.readInt32LE(i));
    }
  }
  const all = new Set<string>();
  const byConv = new Map<string, Set<string>>();
  const convSet = (conv: string | null): Set<string> | null =>
    conv === null ? null : (byConv.get(conv) ?? byConv.set(conv, new Set()).get(conv)!);
  for (const run of keysAt(t, 0, fromOrd, read)) {
    let conv: Set<string> | null | undefined;
    for (let i = 0; i + KEY_BYTES <= run.keys.length; i += KEY_BYTES) {
      if (!heads.has(run.keys.readInt32LE(i))) continue;
      const k = run.keys.toString('latin1', i, i + KEY_BYTES);
      if (!wanted.has(k)) continue;
      all.add(k);
      conv ??= convSet(run.conversation_id);
      conv?.add(k);
    }
  }
  const redo: Redo[] = [];
  for (const run of keysAt(t, fromOrd, runCount, read)) {
    const keys: string[] = [];
    for (let i = 0; i < run.keys.length; i += KEY_BYTES) keys.push(run.keys.toString('latin1', i, i + KEY_BYTES));
    const conv = convSet(run.conversation_id);
    let startAll = 0;
    while (startAll < keys.length && all.has(keys[startAll]!)) startAll++;
    let startConv = 0;
    while (conv !== null && startConv < keys.length && conv.has(keys[startConv]!)) startConv++;
    // the document length sums follow from the starts and the lengths: unchanged when neither changed
    if (rewritten.has(run.run_key) || startAll !== run.start_all || startConv !== run.start_conv)
      redo.push([run.run_key, startAll, startConv]);
    for (const k of keys) {
      all.add(k);
      conv?.add(k);
    }
  }
  return redo;
}

/**
 * Recomputes cross-run attribution (spec §3.4) for every run from corpus position `fromOrd` on:
 * a run's section starts after the leading prefix of its record that earlier runs already hold,
 * store-wide and within its conversation. Reads the runs' key blobs (with their section starts), never
 * the messages, and the whole row only of a run `rewritten` (its record changed) or whose starts move.
 * Only the keys of the runs from `fromOrd` on are ever looked up, so the earlier runs' keys are scanned
 * for those alone (a 32-bit head first, no string made for a key that cannot be one of them): an
 * appended run costs a scan of the key blobs, not a set of every key; one that only continues its
 * conversation, a read of that conversation's runs (withinConversations). Returns the corpus positions
 * of the rows it rewrote, and how many runs' keys it read.
 */
export function attribute(
  t: IndexTables,
  runCount: number,
  fromOrd: number,
  rewritten: ReadonlySet<number>,
  /** Each run's conversation by corpus position, as the store lists them (checked against the index's rows): lets a few appended runs be attributed within their conversations (withinConversations). */
  conversations?: ReadonlyArray<string | null>,
): { changed: number[]; keysRead: number } {
  const read = { rows: 0 };
  const redo =
    (conversations !== undefined ? withinConversations(t, runCount, fromOrd, rewritten, conversations, read) : null) ??
    storeWide(t, runCount, fromOrd, rewritten, read);
  const changed: number[] = [];
  for (const [runKey, startAll, startConv] of redo) {
    const row = t.run(runKey);
    let dlFull = 0;
    let dlAll = 0;
    let dlConv = 0;
    readVarints(row.lengths).forEach((dl, pos) => {
      dlFull += dl;
      if (pos >= startAll) dlAll += dl;
      if (pos >= startConv) dlConv += dl;
    });
    const next = { start_all: startAll, start_conv: startConv, dl_full: dlFull, dl_all: dlAll, dl_conv: dlConv };
    if ((Object.keys(next) as Array<keyof typeof next>).some((k) => row[k] !== next[k])) {
      t.putRun(Object.assign(row, next));
      changed.push(row.ord);
    }
  }
  return { changed, keysRead: read.rows };
}
