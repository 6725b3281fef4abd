import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { instructionDeltaPart, simulateRun, summaryRequest, textPart, toolCallPart, type JsonObject } from '../../scripts/lib/messages.js';
import type { MediaCache } from '../../src/history/media.js';
import { RunReplayer, type ParsedSnapshot } from '../../src/history/replay.js';
import type { StoreSnapshot } from '../../src/store/reader.js';
import { assistantMsg, at, dumps, userMsg } from '../helpers/stores.js';
import { jsonShape as shape } from '../helpers/json-shape.js';
import { draws } from '../helpers/draws.js';

/**
 * Replay reuses the previous snapshot's parse (a byte-identical prefix of whole elements, and elements
 * that differ only in stamped fields). Here every adversarial sequence of snapshots is replayed twice,
 * with reuse and with every snapshot parsed whole, and the records must be identical to the last detail.
 */

// No snapshot here carries media markers, so the lookup is never asked.
const NO_MEDIA = { get: () => null } as unknown as MediaCache;

function replay(
  rows: StoreSnapshot[],
  reuse: boolean,
  seed: ParsedSnapshot | null,
  keepJson = true,
): { record: string; last: ParsedSnapshot | null } {
  const r = new RunReplayer('r1', NO_MEDIA, [], seed, keepJson, reuse);
  for (const row of rows) r.add(row);
  const res = r.result();
  const record = JSON.stringify({
    messages: res.messages.map((m) => [shape(m.message.raw), m.message.kind, m.keys, m.firstSeq, m.firstStep, m.json]),
    skipped: res.skipped,
    unknown: [...res.unknownPartKinds],
    read: res.snapshotsRead,
  });
  return { record, last: r.lastSnapshot };
}

function rowsOf(texts: unknown[]): StoreSnapshot[] {
  return texts.map((messages, i) => ({ seq: i + 1, stepIndex: i, timestamp: null, messages }));
}

/** Same record with and without reuse, also when seeded with a previous run's last snapshot. */
function assertSameRecord(texts: unknown[], seedTexts: string[] = []): void {
  const seed = seedTexts.length > 0 ? replay(rowsOf(seedTexts), true, null).last : null;
  const rows = rowsOf(texts);
  // with the kept copies' stored text (export) and without (search)
  for (const keepJson of [true, false]) {
    const fast = replay(rows, true, seed, keepJson).record;
    const whole = replay(rows, false, null, keepJson).record;
    assert.equal(fast, whole, `snapshots: ${JSON.stringify(texts).slice(0, 400)}`);
  }
}

const sim = simulateRun({
  runId: 'r1',
  conversationId: 'c1',
  startedAt: at(0),
  instructions: 'be precise',
  prompt: 'audit the vault',
  steps: [
    { parts: [toolCallPart('open', { door: 1, 2: 'two' }, 'c-1')], results: [{ content: 'door 1 open' }] },
    { parts: [toolCallPart('open', { door: 2, force: 1.5 }, 'c-2')], results: [{ content: { rows: [1, 2.0], note: 'ok \ud800' } }] },
    { parts: [textPart('vault audited \u00e9\ud83d\ude00')] },
  ],
});
const simTexts = sim.snapshots.map((s) => dumps(s.messages));
const last = simTexts.at(-1)!;

/** `text` with the character at `at` replaced by `c` (same length). */
function setChar(text: string, index: number, c: string): string {
  return text.slice(0, index) + c + text.slice(index + 1);
}

describe('replay with parse reuse equals replay with every snapshot parsed whole', () => {
  test('a simulated run, snapshot after snapshot', () => {
    assertSameRecord(simTexts);
  });

  test('an earlier message rewritten in place to the same length', () => {
    const i = last.indexOf('door 1 open');
    const rewritten = setChar(last, i + 5, '7');
    assert.equal(rewritten.length, last.length);
    assertSameRecord([last, rewritten]);
    assertSameRecord([...simTexts, rewritten, last]);
    // a change in the very last characters of an earlier message (a number, then a bracket)
    const tail = (n: string): string => `${dumps([userMsg('q', 1)]).slice(0, -2)}, "x": ${n}}, ${dumps([assistantMsg('a', 2)]).slice(1)}`;
    assertSameRecord([tail('1'), tail('12'), tail('2'), tail('[1]'), tail('[2]'), tail('1')]);
  });

  test('a snapshot sharing a prefix that ends inside a string of its last message', () => {
    const a = dumps([userMsg('first question', 1), assistantMsg('an answer', 2)]);
    const b = dumps([userMsg('first question', 1), assistantMsg('an answer, now longer', 2)]);
    const c = dumps([userMsg('first question', 1), assistantMsg('an answer', 2), userMsg('more', 3)]);
    assertSameRecord([a, b, c, a]);
  });

  test('a snapshot cut mid-message, broken after a shared prefix, or not text at all is skipped the same way', () => {
    const cut = last.slice(0, last.length - 40);
    const broken = `${last.slice(0, -1)}, {"kind": "request", "parts": [}]`;
    const garbage = `${last.slice(0, -1)}, x]`;
    const trailing = `${last} x`;
    assertSameRecord([simTexts[0]!, cut, simTexts[1]!, broken, garbage, trailing, null, Buffer.from('[]'), last]);
  });

  test('stamped fields changed on earlier messages (same and other lengths), whitespace, and number spellings', () => {
    const restamped = last.replace('"timestamp": "2026-01-02T03:04:11.750000Z"', '"timestamp": "2026-01-02T03:04:12.750000Z"');
    const partStamp = last.replace('"timestamp": "2026-01-02T03:04:30.250000Z"', '"timestamp": "2026-01-02T03:04:31.250000Z"');
    const instructions = last.replace('"instructions": "be precise"', '"instructions": "be preciser"');
    const spaced = last.replace('"kind": "request"', '"kind" :  "request"');
    const float = last.replace('"door": 1', '"door": 1.0');
    const exp = last.replace('"force": 1.5', '"force": 15e-1');
    const rows = last.replace('"rows": [1, 2]', '"rows": [1, 2.0]');
    const edited = [restamped, partStamp, instructions, spaced, float, exp, rows];
    for (const t of edited) assert.notEqual(t, last);
    assertSameRecord([...simTexts, ...edited, last]);
    for (const t of edited) {
      assertSameRecord([last, t]);
      assertSameRecord([last, t, last]);
    }
  });

  test('restamps scanned from the first differing member: every member changed, earlier elements of other lengths', () => {
    // element 1 is the restamp candidate; element 0 changes length so that it sits at another offset
    const base = [userMsg('q1', 1), assistantMsg('a1', 2)];
    const texts = base.map((m) => dumps([m]).slice(1, -1));
    const snap = (first: string, second: string): string => `[${first}, ${second}]`;
    const longer = texts[0]!.replace('"q1"', '"q1, now asked at length"');
    const variants = [texts[1]!];
    const a1 = texts[1]!;
    // one change per member of the response (keyless or not), each value made longer and shorter
    for (const [, key] of a1.matchAll(/"([a-z_]+)": (?=[^{[])/g)) {
      const at = a1.indexOf(`"${key}": `);
      const valueAt = at + key!.length + 4;
      variants.push(
        `${a1.slice(0, valueAt)}"x"${a1.slice(a1.indexOf(',', valueAt) < 0 ? a1.indexOf('}', valueAt) : a1.indexOf(',', valueAt))}`,
      );
    }
    // a keyless change followed by a change that is not, an extra member, a duplicated key, whitespace
    const stamped = a1.replace('"timestamp": "2026-01-02T03:04:07Z"', '"timestamp": "2026-01-02T03:04:08.5Z"');
    variants.push(stamped.replace('"finish_reason": null', '"finish_reason": "stop"'));
    variants.push(stamped.replace('"model_name": null', '"model_name": "m"'));
    variants.push(stamped.replace('"state": "complete"}', '"state": "complete", "extra": 1}'));
    variants.push(stamped.replace('"run_id": null', '"run_id": null, "run_id": "r"'));
    variants.push(stamped.replace('"run_id": null, ', '"run_id": null ,   '));
    variants.push(a1.replace('"kind": "response"', '"kind": "request"'));
    variants.push(a1.replace('"timestamp": "2026-01-02T03:04:07Z"}', '"timestamp": "2026-01-02T03:04:07Z", "x": "}"}'));
    for (const v of variants) {
      for (const [f1, f2] of [
        [texts[0]!, longer],
        [longer, texts[0]!],
        [texts[0]!, texts[0]!],
      ]) {
        assertSameRecord([snap(f1!, a1), snap(f2!, v)]);
        assertSameRecord([snap(f1!, v), snap(f2!, a1)]);
        assertSameRecord([snap(f1!, stamped), snap(f2!, v), snap(f1!, a1)]);
      }
    }
  });

  test('dropped leading messages, inserted, duplicated and reordered messages, compaction summaries', () => {
    const m = [userMsg('q1', 1), assistantMsg('a1', 2), userMsg('q2', 3), assistantMsg('a2', 4)];
    const summary = summaryRequest('what happened so far', { partTimestamp: at(5) });
    const flat = summaryRequest('flattened', { partTimestamp: at(5), shape: 'flattened-user' });
    const seq: JsonObject[][] = [
      m.slice(0, 2),
      m,
      m.slice(2),
      [summary, ...m.slice(2)],
      [summary, ...m.slice(2), userMsg('q3', 6)],
      [m[0]!, m[2]!, m[1]!, m[3]!],
      [...m, m[3]!, m[3]!],
      [...m, m[3]!],
      [flat, m[0]!, m[0]!],
      [m[0]!, userMsg('inserted', 7), ...m.slice(1)],
    ];
    assertSameRecord(seq.map(dumps));
  });

  test('instruction deltas and odd strings (lone surrogates, replacement characters, escapes)', () => {
    const withDelta = (id: string, content: string | null): JsonObject => {
      const u = userMsg('q', 1);
      (u.parts as JsonObject[]).push(instructionDeltaPart(id, content));
      return u;
    };
    const seq = [
      [withDelta('d1', 'x')],
      [withDelta('d1', 'y')],
      [withDelta('d1', 'y'), assistantMsg('\ud800 lone', 2)],
      [withDelta('d1', 'y'), assistantMsg('\udc00 lone', 2)],
      [withDelta('d1', 'y'), assistantMsg('\ufffd\u0000"\\', 2)],
    ];
    assertSameRecord(seq.map(dumps));
    // the same texts with non-ASCII left raw (not \u-escaped) in the JSON
    assertSameRecord(seq.map((s) => JSON.stringify(s)));
  });

  test("a run's first snapshot seeded with the previous run's last snapshot", () => {
    const next = dumps([...sim.snapshots.at(-1)!.messages, userMsg('a follow-up', 30)]);
    const changed = setChar(next, next.indexOf('audit the vault'), 'A');
    assertSameRecord([next], simTexts);
    assertSameRecord([changed, next], simTexts);
  });

  test('random edits of a growing run (appends, same-length rewrites, cuts, restamps, repeats)', () => {
    const rand = draws(7);
    const kinds = [0, 0, 0, 0, 0, 0, 0];
    for (let round = 0; round < 40; round++) {
      const msgs: JsonObject[] = [userMsg('start', 0)];
      const texts: string[] = [dumps(msgs)];
      for (let step = 1; step < 12; step++) {
        const prev = texts.at(-1)!;
        const kind = rand(7);
        kinds[kind]!++;
        if (kind <= 1) {
          msgs.push(step % 2 ? assistantMsg(`answer ${rand(5)}`, step) : userMsg(`question ${rand(5)}`, step));
          texts.push(dumps(msgs));
        } else if (kind === 2) {
          // same-length rewrite of a letter somewhere in the snapshot
          const letters = [...prev.matchAll(/[a-z]/g)].map((x) => x.index!);
          texts.push(setChar(prev, letters[rand(letters.length)]!, 'z'));
        } else if (kind === 3) {
          texts.push(prev.slice(0, rand(prev.length)));
        } else if (kind === 4) {
          texts.push(
            prev.replace(/"timestamp": "2026-01-02T03:0(\d)/, (_, d: string) => `"timestamp": "2026-01-02T03:0${(Number(d) + 1) % 10}`),
          );
        } else if (kind === 5) {
          texts.push(texts[rand(texts.length)]!);
        } else {
          texts.push(dumps(msgs.slice(rand(msgs.length))));
        }
      }
      assertSameRecord(texts);
    }
    assert.ok(
      kinds.every((n) => n >= 20),
      `every kind of edit: ${kinds}`,
    );
  });
});
