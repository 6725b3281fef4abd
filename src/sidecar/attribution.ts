import { IndexDamagedError } from './errors.js';
import { KeyFilter } from './key-filter.js';
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

/** Whether some run the index holds may hold the key at `src[at .. at + 20)`: the key filter's answer, or yes without a usable one. */
type MayBeHeld = (src: Uint8Array, at: number) => boolean;

/**
 * The starts of the runs from `fromOrd` on (`later`, their key rows), from the keys of the earlier runs
 * of their conversations alone (found by their conversation: IndexTables.ordsInConversation), read one
 * conversation's runs at a time: a key held there is held store-wide too, so a run that continues its
 * conversation holds the leading keys its conversation's runs hold; of the key its store-wide start
 * stops at, when it is no key of its conversation, the filter of every run's keys (key-filter.ts,
 * `mayBeHeld`) says that no run holds it (a new message, as a run that continues its conversation mostly
 * adds; a run of the conversation not found would hold it, so the filter would not say so). Null when
 * that cannot tell (the filter may hold the key, or there is none; more runs than a few): the store-wide
 * scan decides.
 */
function withinConversations(
  t: IndexTables,
  fromOrd: number,
  rewritten: ReadonlySet<number>,
  read: { rows: number },
  later: readonly RunKeys[],
  mayBeHeld: MayBeHeld,
): Redo[] | null {
  if (fromOrd <= 0 || later.length > WITHIN_CONVERSATIONS_MAX) return null;
  const sets = new Map<string, Set<string>>();
  for (const run of later) if (run.conversation_id !== null) sets.set(run.conversation_id, new Set());
  for (const [conv, set] of sets)
    for (const ord of t.ordsInConversation(conv, fromOrd))
      for (const run of keysAt(t, ord, ord + 1, read)) {
        if (run.conversation_id !== conv) return null;
        for (let i = 0; i + KEY_BYTES <= run.keys.length; i += KEY_BYTES) set.add(run.keys.toString('latin1', i, i + KEY_BYTES));
      }
  // the keys of the runs attributed before each one here, store-wide
  const fresh = new Set<string>();
  const redo: Redo[] = [];
  for (const run of later) {
    if (run.keys.length % KEY_BYTES !== 0) return null;
    const set = run.conversation_id === null ? null : sets.get(run.conversation_id)!;
    const keys: string[] = [];
    for (let i = 0; i < run.keys.length; i += KEY_BYTES) keys.push(run.keys.toString('latin1', i, i + KEY_BYTES));
    const n = keys.length;
    // a run without a conversation has its conversation start at 0 (as storeWide says)
    let startConv = 0;
    while (set !== null && startConv < n && set.has(keys[startConv]!)) startConv++;
    let startAll = startConv;
    while (startAll < n && (set?.has(keys[startAll]!) || fresh.has(keys[startAll]!))) startAll++;
    if (startAll < n && mayBeHeld(run.keys, startAll * KEY_BYTES)) return null;
    if (rewritten.has(run.run_key) || run.start_all !== startAll || run.start_conv !== startConv)
      redo.push([run.run_key, startAll, startConv]);
    for (const k of keys) {
      set?.add(k);
      fresh.add(k);
    }
  }
  return redo;
}

/** An open-addressing table's slots for `entries` entries (a power of two, at most half full). */
const slotsFor = (entries: number): Int32Array => {
  let n = 1024;
  while (n < 2 * entries) n *= 2;
  return new Int32Array(n).fill(-1);
};

/**
 * The distinct keys met, each numbered, in flat arrays: a build's attribution meets every key of the
 * store (~400k at 50k runs), as strings in Sets ~30 MB of heap at the build's peak, here ~13 MB.
 */
export class KeyIds {
  private keys = new Uint8Array(KEY_BYTES * 1024);
  private slots = slotsFor(1024);
  size = 0;

  /** The number of the key at `at` of `src`, or -1. */
  find(src: Uint8Array, at: number): number {
    const mask = this.slots.length - 1;
    // keys are SHA-1 digests: any 4 of their bytes are a hash
    for (let s = ((src[at]! | (src[at + 1]! << 8) | (src[at + 2]! << 16)) ^ (src[at + 3]! << 24)) & mask; ; s = (s + 1) & mask) {
      const id = this.slots[s]!;
      if (id === -1) return -1;
      if (this.same(id, src, at)) return id;
    }
  }

  /** A key filter (key-filter.ts) of every key held. */
  filter(): KeyFilter {
    const f = KeyFilter.sized(this.size);
    for (let id = 0; id < this.size; id++) f.add(this.keys, id * KEY_BYTES);
    return f;
  }

  /** The number of the key at `at` of `src`, given one when new. */
  add(src: Uint8Array, at: number): number {
    const known = this.find(src, at);
    if (known !== -1) return known;
    if (2 * (this.size + 1) > this.slots.length) this.grow();
    if ((this.size + 1) * KEY_BYTES > this.keys.length) {
      const keys = new Uint8Array(this.keys.length * 2);
      keys.set(this.keys);
      this.keys = keys;
    }
    const id = this.size++;
    // byte by byte: a subarray to copy from is an object per key
    for (let i = 0, o = id * KEY_BYTES; i < KEY_BYTES; i++) this.keys[o + i] = src[at + i]!;
    this.place(id);
    return id;
  }

  private same(id: number, src: Uint8Array, at: number): boolean {
    const o = id * KEY_BYTES;
    for (let i = 0; i < KEY_BYTES; i++) if (this.keys[o + i] !== src[at + i]) return false;
    return true;
  }

  private place(id: number): void {
    const k = this.keys;
    const o = id * KEY_BYTES;
    const mask = this.slots.length - 1;
    let s = ((k[o]! | (k[o + 1]! << 8) | (k[o + 2]! << 16)) ^ (k[o + 3]! << 24)) & mask;
    while (this.slots[s] !== -1) s = (s + 1) & mask;
    this.slots[s] = id;
  }

  private grow(): void {
    this.slots = slotsFor(this.size + 1);
    for (let id = 0; id < this.size; id++) this.place(id);
  }
}

/** Pairs (conversation number, key number), in flat arrays (see KeyIds). */
export class PairSet {
  private pairs = new Int32Array(2 * 1024);
  private slots = slotsFor(1024);
  private size = 0;

  has(conv: number, key: number): boolean {
    const mask = this.slots.length - 1;
    for (let s = hashPair(conv, key) & mask; ; s = (s + 1) & mask) {
      const e = this.slots[s]!;
      if (e === -1) return false;
      if (this.pairs[2 * e] === conv && this.pairs[2 * e + 1] === key) return true;
    }
  }

  add(conv: number, key: number): void {
    if (this.has(conv, key)) return;
    if (2 * (this.size + 1) > this.slots.length) {
      this.slots = slotsFor(this.size + 1);
      for (let e = 0; e < this.size; e++) this.place(e);
    }
    if (2 * (this.size + 1) > this.pairs.length) {
      const pairs = new Int32Array(this.pairs.length * 2);
      pairs.set(this.pairs);
      this.pairs = pairs;
    }
    this.pairs[2 * this.size] = conv;
    this.pairs[2 * this.size + 1] = key;
    this.place(this.size++);
  }

  private place(e: number): void {
    const mask = this.slots.length - 1;
    let s = hashPair(this.pairs[2 * e]!, this.pairs[2 * e + 1]!) & mask;
    while (this.slots[s] !== -1) s = (s + 1) & mask;
    this.slots[s] = e;
  }
}

const hashPair = (conv: number, key: number): number => Math.imul(key ^ Math.imul(conv, 0x9e3779b1), 0x85ebca6b) ^ (key >>> 13);

/** Whether the runs from `fromOrd` on are fewer than those before them (storeWide then holds their keys). */
const fewerLater = (runCount: number, fromOrd: number): boolean => runCount - fromOrd < fromOrd;

/** Whether `n` is a start a record of `count` keys can have. */
const startIn = (n: unknown, count: number): n is number => Number.isSafeInteger(n) && (n as number) >= 0 && (n as number) <= count;

/**
 * The starts of the runs from `fromOrd` on (`later`, their key rows in corpus order) when the only
 * change since they were last attributed is keys appended to the records of the runs written anew
 * (`appendedFrom`: each one's key count before; nothing else moved, came or went). The keys earlier runs
 * hold then grew by those new keys alone (within a conversation, by those of its runs), so a run's
 * start, where its record's leading prefix of held keys stopped, stays there unless the key it stopped
 * at is one of them. A run written anew whose start was the end of its record before stays there when
 * the key filter (`mayBeHeld`, key-filter.ts) says no run holds its first new key; when it may, or there is
 * none, every earlier key must tell. Null whenever a start may move: the store-wide
 * scan decides. Reads no row of an earlier run: a step appended to a recent run at 50,000 runs read
 * every run's keys before (about 250 ms of an update).
 */
function appendedOnly(
  later: readonly RunKeys[],
  rewritten: ReadonlySet<number>,
  appendedFrom: ReadonlyMap<number, number>,
  mayBeHeld: MayBeHeld,
): Redo[] | null {
  // the new keys of the runs written anew met so far, store-wide and per conversation
  const fresh = new Set<string>();
  const freshIn = new Map<string, Set<string>>();
  const redo: Redo[] = [];
  let written = 0;
  for (const run of later) {
    const { keys, conversation_id: conv } = run;
    if (keys.length % KEY_BYTES !== 0) return null;
    const n = keys.length / KEY_BYTES;
    const anew = rewritten.has(run.run_key);
    const was = anew ? appendedFrom.get(run.run_key) : n;
    if (was === undefined || !(was >= 0 && was <= n) || !startIn(run.start_all, was) || !startIn(run.start_conv, was)) return null;
    const key = (i: number): string => keys.toString('latin1', i * KEY_BYTES, (i + 1) * KEY_BYTES);
    // a start that was its record's end stays at the first new key unless some run holds that key: the
    // filter of every run's keys says when none does (else, or without one, every earlier key decides)
    const heldAnywhere = (): boolean => fresh.has(key(was)) || mayBeHeld(keys, was * KEY_BYTES);
    // where each start stopped: past its end only for a run not written anew (nothing can move it then)
    if (run.start_all < n && (run.start_all === was ? heldAnywhere() : fresh.has(key(run.start_all)))) return null;
    // a run without a conversation has its conversation start at 0, whatever earlier runs hold
    if (conv !== null && run.start_conv < n && (run.start_conv === was ? heldAnywhere() : freshIn.get(conv)?.has(key(run.start_conv))))
      return null;
    if (!anew) continue;
    written++;
    redo.push([run.run_key, run.start_all, run.start_conv]);
    let mine = conv === null ? undefined : freshIn.get(conv);
    if (conv !== null && mine === undefined) freshIn.set(conv, (mine = new Set()));
    for (let i = was; i < n; i++) {
      fresh.add(key(i));
      mine?.add(key(i));
    }
  }
  // every run written anew lies from fromOrd on
  return written === rewritten.size ? redo : null;
}

/**
 * The keys of `runs`, numbered: the only keys of earlier runs that can move a later run's starts (a
 * KeyIds, not a Set of their texts: no string made per key).
 */
function keysOf(runs: readonly RunKeys[]): KeyIds {
  const ids = new KeyIds();
  for (const run of runs) for (let i = 0; i + KEY_BYTES <= run.keys.length; i += KEY_BYTES) ids.add(run.keys, i);
  return ids;
}

/**
 * The starts of the runs from `fromOrd` on, from the keys of every earlier run (see attribute). Each run's
 * row is read once. When the later runs are the fewer (an appended run), they are read first and held,
 * and the earlier runs' keys are kept only where a later run holds them; otherwise (an edit of an early
 * run, a build) every earlier key is kept, which the later keys could only ever be looked up against
 * alike, and the later runs are streamed.
 */
function storeWide(
  t: IndexTables,
  runCount: number,
  fromOrd: number,
  rewritten: ReadonlySet<number>,
  read: { rows: number },
  /** The later runs' key rows, when read already (attribute reads them when they are the fewer). */
  later: readonly RunKeys[] | null,
  /** Keep every key, whether later runs hold it or not, for a key filter of them all (none usable is kept). */
  filterAll: boolean,
): { redo: Redo[]; filter: KeyFilter | null } {
  const held = later ?? (fewerLater(runCount, fromOrd) ? [...keysAt(t, fromOrd, runCount, read)] : null);
  const wanted = held === null || filterAll ? null : keysOf(held);
  // every key met is store-wide (`all`), and its conversation's when the run has one
  const all = new KeyIds();
  const inConv = new PairSet();
  const convs = new Map<string, number>();
  const convOf = (conv: string | null): number => {
    if (conv === null) return -1;
    let n = convs.get(conv);
    if (n === undefined) convs.set(conv, (n = convs.size));
    return n;
  };
  for (const run of keysAt(t, 0, fromOrd, read)) {
    let conv: number | undefined;
    for (let i = 0; i + KEY_BYTES <= run.keys.length; i += KEY_BYTES) {
      if (wanted !== null && wanted.find(run.keys, i) === -1) continue;
      const key = all.add(run.keys, i);
      conv ??= convOf(run.conversation_id);
      if (conv !== -1) inConv.add(conv, key);
    }
  }
  const redo: Redo[] = [];
  for (const run of held ?? keysAt(t, fromOrd, runCount, read)) {
    const keys = run.keys;
    if (keys.length % KEY_BYTES !== 0) throw new IndexDamagedError(`the keys of run key ${run.run_key} are not whole keys`);
    const n = keys.length / KEY_BYTES;
    const conv = convOf(run.conversation_id);
    let startAll = 0;
    while (startAll < n && all.find(keys, startAll * KEY_BYTES) !== -1) startAll++;
    let startConv = 0;
    for (let key: number; conv !== -1 && startConv < n; startConv++)
      if ((key = all.find(keys, startConv * KEY_BYTES)) === -1 || !inConv.has(conv, key)) break;
    // the document length sums follow from the starts and the lengths: unchanged when neither changed
    if (rewritten.has(run.run_key) || startAll !== run.start_all || startConv !== run.start_conv)
      redo.push([run.run_key, startAll, startConv]);
    for (let i = 0; i < keys.length; i += KEY_BYTES) {
      const key = all.add(keys, i);
      if (conv !== -1) inConv.add(conv, key);
    }
  }
  // every key of every run met (none was passed over): the filter of them all
  return { redo, filter: wanted === null ? all.filter() : null };
}

/**
 * Recomputes cross-run attribution (spec §3.4) for every run from corpus position `fromOrd` on:
 * a run's section starts after the leading prefix of its record that earlier runs already hold,
 * store-wide and within its conversation. Reads the runs' key blobs (with their section starts), never
 * the messages, and the whole row only of a run `rewritten` (its record changed) or whose starts move.
 * Only the keys of the runs from `fromOrd` on are ever looked up, so when those runs are the fewer the
 * earlier runs' keys are kept for them alone: an appended run costs a scan of the key blobs, not a
 * table of every key; one that only continues its conversation, a read of that conversation's runs
 * (withinConversations); messages appended to recent runs, a read of the runs from the first of them on
 * (appendedOnly). Each run's key row is read once. Returns the corpus positions
 * of the rows it rewrote, and how many runs' keys it read.
 */
export function attribute(
  t: IndexTables,
  runCount: number,
  fromOrd: number,
  rewritten: ReadonlySet<number>,
  /**
   * When every run written anew only had messages appended and no other run moved, came or went: each
   * one's key count before (appendedOnly).
   */
  appendedFrom: ReadonlyMap<number, number> | null = null,
  /** Runs came (not only steps): a few of them may be attributed within their conversations (withinConversations). */
  runsCame = true,
): { changed: number[]; keysRead: number } {
  const read = { rows: 0 };
  const kept = t.keyFilter();
  // (a full one still takes the keys below: it stays a superset, though it answers nothing until built again)
  const filter = kept !== null && !kept.full ? kept : null;
  // the runs attributed, read first when they are the fewer or a few (every way below looks at them)
  const later =
    fewerLater(runCount, fromOrd) || runCount - fromOrd <= WITHIN_CONVERSATIONS_MAX ? [...keysAt(t, fromOrd, runCount, read)] : null;
  const mayBeHeld: MayBeHeld = filter === null ? () => true : (src, at) => filter.mayHold(src, at);
  let redo: Redo[] | null = appendedFrom !== null && later !== null ? appendedOnly(later, rewritten, appendedFrom, mayBeHeld) : null;
  if (redo === null && runsCame && later !== null) redo = withinConversations(t, fromOrd, rewritten, read, later, mayBeHeld);
  let built: KeyFilter | null = null;
  if (redo === null) ({ redo, filter: built } = storeWide(t, runCount, fromOrd, rewritten, read, later, filter === null));
  // the filter goes on holding every run's keys: built from all of them, or given the attributed runs'
  if (built !== null) t.putKeyFilter(built);
  else if (kept !== null) {
    let added = false;
    for (const run of later ?? keysAt(t, fromOrd, runCount, read))
      for (let i = 0; i + KEY_BYTES <= run.keys.length; i += KEY_BYTES) added = kept.add(run.keys, i) || added;
    if (added) t.putKeyFilter(kept);
  }
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
