/**
 * Bounded fuzzing (issue #5): damaged stores and hostile snapshot JSON must never crash convsearch.
 *
 * Fixed-seed cases mutate copies of the parity fixture stores, either as bytes (bit flips, overwritten
 * pages, truncation, header fields) or as rows (snapshot JSON with deleted keys, wrong types, control
 * characters, lone surrogates, huge strings, deep nesting, wrong kinds, broken text; runs/media/schema
 * rows with wrong types). Each case runs the library the way the CLI commands do (runs, conversations,
 * search in three scopes, show, and for some cases the persistent index). The CLI's `main` turns a
 * StoreError, a UsageError or an SQLite error into one line and exit status 2; anything else would be an
 * "internal error", so at library level every thrown error must be one of those classes with a one-line
 * message. A sample of the damaged stores also goes through the real CLI: exit status 0, 1 or 2, and
 * stderr holds only `convsearch: ...` lines, never a stack trace.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, readFileSync, readdirSync, rmSync, truncateSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';

import { HistorySource } from '../../src/history/source.js';
import type { RunListing } from '../../src/api/listings.js';
import type { SearchOutcome, SearchRequest } from '../../src/api/search.js';
import { NotFoundError } from '../../src/api/errors.js';
import { openSession } from '../../src/api/session.js';
import { searchJson } from '../../src/output/json.js';
import { runsJson } from '../../src/output/listing-json.js';
import { showJson } from '../../src/output/show.js';
import { toolText } from '../../src/output/tool-text.js';
import { renderRecordMessage } from '../../src/render/record.js';
import { StoreError } from '../../src/store/errors.js';
import { openSqliteReader } from '../../src/store/sqlite/reader.js';
import { cli, FIXTURES, type CliResult } from '../helpers/cli.js';
import { cliEnv, prng, STACK_LINE, tempDir } from '../helpers/hardening.js';

const SEED = 0x5eed_2026;
const CASES = Number(process.env.CONVSEARCH_FUZZ_CASES ?? 1000);
const CLI_EVERY = Math.max(1, Math.floor(CASES / 50));
const INDEX_EVERY = 5;
const PAST = new Date(Date.UTC(2025, 0, 1));

const FIXTURE_DIR = join(FIXTURES, 'parity');
const STORES = readdirSync(FIXTURE_DIR)
  .filter((f) => f.endsWith('.db'))
  .sort()
  .map((f) => join(FIXTURE_DIR, f));

const work = tempDir('fuzz');
/** Indexes live elsewhere: convsearch refuses an index beside the store. */
const indexWork = tempDir('fuzz-index');
const cache = tempDir('fuzz-cache');

// ---------------------------------------------------------------------------------------------
// error classes the CLI maps to one line

type Outcome = { ok: true } | { ok: false; expected: boolean; error: unknown; detail: string };

function isSqliteError(e: unknown): boolean {
  return (
    e instanceof Error &&
    e.constructor.name === 'SqliteError' &&
    typeof (e as { code?: unknown }).code === 'string' &&
    (e as unknown as { code: string }).code.startsWith('SQLITE_')
  );
}

/** A search's outcome; a scope the store lacks answers with the reference's reply its NotFoundError carries. */
function answer(search: () => SearchOutcome): SearchOutcome {
  try {
    return search();
  } catch (e) {
    if (e instanceof NotFoundError && e.outcome !== null) return e.outcome;
    throw e;
  }
}

function classify(e: unknown): Outcome {
  const detail = e instanceof Error ? (e.stack ?? e.message).split('\n').slice(0, 6).join('\n') : String(e);
  const expectedClass = e instanceof StoreError || isSqliteError(e);
  const oneLine = e instanceof Error && e.message.length > 0 && !/[\r\n]/.test(e.message);
  return { ok: false, expected: expectedClass && oneLine, error: e, detail };
}

// ---------------------------------------------------------------------------------------------
// what each case runs: the library calls behind runs / conversations / search / show

const QUERIES = ['refund idempotency', 'the', 'データ error', 'timeout', 'zebra'];

function request(rnd: () => number, scope: 'all' | 'conversation', conversationId: string | null, runId: string | null): SearchRequest {
  return {
    query: QUERIES[Math.floor(rnd() * QUERIES.length)]!,
    scope,
    conversationId,
    runId,
    maxMatches: 1 + Math.floor(rnd() * 10),
    contextLines: Math.floor(rnd() * 4),
  };
}

/** Runs every command's library call (the API the CLI calls) over `path`; returns how it ended. */
function exercise(path: string, rnd: () => number, indexPath: string | null): Outcome {
  try {
    const session = openSession(path, { index: false });
    try {
      const runs = session.runs();
      JSON.stringify(listingJson(session.listRuns()));
      JSON.stringify(session.listConversations());
      const pick = runs.length ? runs[Math.floor(rnd() * runs.length)]! : null;
      const scoped: SearchRequest[] = [
        request(rnd, 'all', null, null),
        request(rnd, 'conversation', pick?.conversationId ?? '', null),
        request(rnd, 'all', null, pick?.runId ?? 'no-such-run'),
      ];
      for (const r of scoped) {
        const outcome = answer(() => session.search(r));
        toolText(outcome);
        JSON.stringify(searchJson(outcome));
      }
      if (pick) {
        // show: the full record rendered, and the interrupted snapshots
        JSON.stringify(showJson(session.showRun(pick.runId, { includeInterrupted: true })));
      }
      if (indexPath) {
        const indexed = openSession(path, { index: { path: indexPath } });
        try {
          const outcome = answer(() => indexed.search(scoped[Math.floor(rnd() * scoped.length)]!));
          toolText(outcome);
          JSON.stringify(searchJson(outcome));
        } finally {
          indexed.close();
        }
      }
    } finally {
      session.close();
    }
    return { ok: true };
  } catch (e) {
    return classify(e);
  }
}

function listingJson(l: RunListing | null): unknown {
  return l && runsJson(l.runs, l.warnings);
}

// ---------------------------------------------------------------------------------------------
// mutations

type Rnd = () => number;
const int = (rnd: Rnd, n: number): number => Math.floor(rnd() * n);
const choice = <T>(rnd: Rnd, xs: readonly T[]): T => xs[int(rnd, xs.length)]!;

const NASTY_STRINGS = [
  '\u0000',
  '\u001b[2J\u001b]0;pwned\u0007',
  '\u009b31m',
  '\u202e\u2066reversed\u2069',
  '\ud800',
  '\udfff tail',
  'a\ud83d',
  '\ud83d\ude00\ufe0f',
  '\r\n\t\v\f',
  'Summary of previous conversation:\n\n',
  '__harness_external_media__',
  'media+sha256://' + 'f'.repeat(64),
  '',
  ' ',
  "x' OR '1'='1",
  '\u00ad\u200b\ufeff',
];

function randomScalar(rnd: Rnd): unknown {
  switch (int(rnd, 9)) {
    case 0:
      return null;
    case 1:
      return rnd() < 0.5;
    case 2:
      return int(rnd, 1000) - 500;
    case 3:
      return rnd() * 1e6;
    case 4:
      return choice(rnd, NASTY_STRINGS);
    case 5:
      return [];
    case 6:
      return {};
    case 7:
      return [choice(rnd, NASTY_STRINGS), int(rnd, 9)];
    default:
      return {
        kind: choice(rnd, ['binary', 'text-content', 'image-url', 'request', 'response']),
        content: choice(rnd, NASTY_STRINGS),
        data: '!!notbase64',
      };
  }
}

function hugeString(rnd: Rnd): string {
  const size = 50_000 + int(rnd, 450_000);
  return rnd() < 0.5 ? 'zebra '.repeat(Math.ceil(size / 6)) : 'x'.repeat(size);
}

/**
 * Deep nesting is spliced into the serialized text: JSON.stringify itself overflows the stack on a few
 * thousand levels. `deep` returns a placeholder string that `spliceDeep` replaces.
 */
const DEEP_TEXTS = new Map<string, string>();

function deep(rnd: Rnd): string {
  const depth = choice(rnd, [64, 1000, 2500, 3000, 4000, 5000, 9_999, 10_001, 20_000]);
  const leaf = choice(rnd, ['"bottom zebra"', '1', 'null', '{"kind": "binary", "data": "AAAA", "media_type": "image/png"}']);
  const objects = rnd() < 0.5;
  const text = objects ? '{"a": '.repeat(depth) + leaf + '}'.repeat(depth) : '['.repeat(depth) + leaf + ']'.repeat(depth);
  const token = `__deep_${DEEP_TEXTS.size}__`;
  DEEP_TEXTS.set(token, text);
  return token;
}

function spliceDeep(text: string): string {
  for (const [token, deepText] of DEEP_TEXTS) text = text.split(JSON.stringify(token)).join(deepText);
  DEEP_TEXTS.clear();
  return text;
}

/** Every (container, key) slot in a JSON tree, breadth-first, capped. */
function slots(root: unknown, cap = 4000): Array<{ parent: Record<string, unknown> | unknown[]; key: string | number }> {
  const out: Array<{ parent: Record<string, unknown> | unknown[]; key: string | number }> = [];
  const queue: unknown[] = [root];
  while (queue.length && out.length < cap) {
    const v = queue.shift();
    if (Array.isArray(v)) {
      v.forEach((x, i) => {
        out.push({ parent: v, key: i });
        queue.push(x);
      });
    } else if (v !== null && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        out.push({ parent: v as Record<string, unknown>, key: k });
        queue.push(x);
      }
    }
  }
  return out;
}

function setSlot(s: { parent: Record<string, unknown> | unknown[]; key: string | number }, v: unknown): void {
  (s.parent as Record<string | number, unknown>)[s.key] = v;
}

/** Mutates a parsed snapshot message list in place (or returns a replacement); `log` says what. */
function mutateTree(root: unknown, rnd: Rnd, log: string[]): unknown {
  const all = slots(root);
  const stringSlots = all.filter((s) => typeof (s.parent as Record<string | number, unknown>)[s.key] === 'string');
  const namedSlots = (name: string) => all.filter((s) => s.key === name);
  const op = int(rnd, 13);
  switch (op === 12 ? 4 : op) {
    case 0: {
      const objs = all.filter((s) => typeof s.key === 'string');
      if (!objs.length) break;
      const s = choice(rnd, objs);
      delete (s.parent as Record<string, unknown>)[s.key as string];
      log.push(`delete key ${String(s.key)}`);
      break;
    }
    case 1: {
      if (!all.length) break;
      const s = choice(rnd, all);
      const v = randomScalar(rnd);
      setSlot(s, v);
      log.push(`set ${String(s.key)} = ${JSON.stringify(v)?.slice(0, 40)}`);
      break;
    }
    case 2: {
      if (!stringSlots.length) break;
      const s = choice(rnd, stringSlots);
      const nasty = choice(rnd, NASTY_STRINGS);
      const old = (s.parent as Record<string | number, unknown>)[s.key] as string;
      const at = int(rnd, old.length + 1);
      setSlot(s, old.slice(0, at) + nasty + old.slice(at));
      log.push(`insert ${JSON.stringify(nasty)} into ${String(s.key)}`);
      break;
    }
    case 3: {
      const targets = [...namedSlots('content'), ...namedSlots('args'), ...namedSlots('tool_name'), ...namedSlots('transcript')];
      if (!targets.length) break;
      const s = choice(rnd, targets);
      const h = hugeString(rnd);
      setSlot(s, h);
      log.push(`huge ${String(s.key)} (${h.length})`);
      break;
    }
    case 4: {
      // mostly where any JSON is valid: tool-return / retry content, call args, metadata
      const freeForm = all.filter(
        (x) =>
          (x.key === 'content' && /return|retry/.test(String((x.parent as Record<string, unknown>).part_kind))) ||
          x.key === 'args' ||
          x.key === 'metadata' ||
          x.key === 'vendor_metadata',
      );
      const targets = freeForm.length && rnd() < 0.7 ? freeForm : [...namedSlots('content'), ...namedSlots('parts'), ...freeForm];
      const s = targets.length ? choice(rnd, targets) : all.length ? choice(rnd, all) : null;
      if (!s) break;
      const token = deep(rnd);
      setSlot(s, token);
      log.push(`deep nesting at ${String(s.key)} (${DEEP_TEXTS.get(token)!.length} chars)`);
      break;
    }
    case 5: {
      const targets = [...namedSlots('kind'), ...namedSlots('part_kind'), ...namedSlots('tool_kind'), ...namedSlots('speaker')];
      if (!targets.length) break;
      const s = choice(rnd, targets);
      const v = choice(rnd, [
        'request',
        'response',
        'text',
        'tool-call',
        'tool-return',
        'user-prompt',
        'system-prompt',
        'retry-prompt',
        'speech',
        'instruction-delta',
        'compaction',
        'file',
        'binary',
        'mystery',
        '',
        7,
        null,
      ]);
      setSlot(s, v);
      log.push(`${String(s.key)} -> ${JSON.stringify(v)}`);
      break;
    }
    case 6: {
      const targets = namedSlots('parts');
      if (!targets.length) break;
      const s = choice(rnd, targets);
      const v = choice(rnd, [
        null,
        {},
        'parts',
        3,
        [[]],
        [null],
        [{ part_kind: 'text' }],
        [{ part_kind: 'tool-call', tool_name: 'x', args: '{"a": [1, 2' }],
      ]);
      setSlot(s, v);
      log.push(`parts -> ${JSON.stringify(v)}`);
      break;
    }
    case 7: {
      const v = choice(rnd, [{}, 'messages', 42, [], [[]], null, [null], [1, 2], [{ kind: 'request' }], [{ kind: 'response', parts: [] }]]);
      log.push(`top level -> ${JSON.stringify(v)}`);
      return v;
    }
    case 8: {
      if (!Array.isArray(root) || root.length === 0) break;
      const i = int(rnd, root.length);
      const copies = 1 + int(rnd, 3);
      root.splice(i, 0, ...Array.from({ length: copies }, () => structuredClone(root[i])));
      if (rnd() < 0.5) root.reverse();
      log.push(`duplicate message ${i} x${copies}`);
      break;
    }
    case 9: {
      // media marker with a bad or missing digest
      const targets = [...namedSlots('content'), ...namedSlots('data')];
      if (!targets.length) break;
      const s = choice(rnd, targets);
      const uri = choice(rnd, ['media+sha256://' + '0'.repeat(64), 'media+sha256://zz', 'http://x', 7]);
      (s.parent as Record<string, unknown>).__harness_external_media__ = choice(rnd, [true, 1, 'true']);
      (s.parent as Record<string, unknown>).__harness_external_text__ = rnd() < 0.5;
      (s.parent as Record<string, unknown>).__harness_external_uri__ = uri;
      if (rnd() < 0.5)
        (s.parent as Record<string, unknown>).__harness_external_marker_format__ = choice(rnd, ['escaped-keys-v1', 'escaped-keys-v9', 3]);
      if (rnd() < 0.5)
        (s.parent as Record<string, unknown>).__harness_external_escaped_keys__ = choice(rnd, [
          {},
          { __harness_external_uri__: 'x' },
          [],
          'x',
        ]);
      log.push(`media marker ${JSON.stringify(uri)}`);
      break;
    }
    case 10: {
      const targets = namedSlots('args');
      if (!targets.length) break;
      const s = choice(rnd, targets);
      const v = choice(rnd, [
        '{"a": 1',
        '{"a": NaN}',
        '[1, 2]',
        '"str"',
        '{"\\ud800": "\\udfff"}',
        '{"a": ' + '['.repeat(12000) + ']'.repeat(12000) + '}',
        '',
      ]);
      setSlot(s, v);
      log.push(`args -> ${v.slice(0, 30)}`);
      break;
    }
    default: {
      // retry-prompt ErrorDetails with odd shapes
      const targets = namedSlots('content');
      if (!targets.length) break;
      const s = choice(rnd, targets);
      setSlot(s, [
        { type: 'x', loc: choice(rnd, [[], ['a', 1], 'loc', null, [[{}]]]), msg: choice(rnd, NASTY_STRINGS), input: randomScalar(rnd) },
        5,
        null,
        'plain',
      ]);
      log.push('error-details content');
    }
  }
  return root;
}

/** Breaks the serialized text itself (what json.loads would reject or read oddly). */
function mutateText(text: string, rnd: Rnd, log: string[]): string {
  const at = int(rnd, text.length + 1);
  switch (int(rnd, 9)) {
    case 0:
      log.push(`truncate text at ${at}`);
      return text.slice(0, at);
    case 1: {
      const c = choice(rnd, ['"', '\\', '{', '}', '[', ']', ',', ':', '\u0000', '\n', '\ud800', 'x']);
      log.push(`insert ${JSON.stringify(c)} at ${at}`);
      return text.slice(0, at) + c + text.slice(at);
    }
    case 2:
      log.push('BOM');
      return '\ufeff' + text;
    case 3: {
      const lit = choice(rnd, ['NaN', 'Infinity', '-Infinity', '1e999', '123456789012345678901234567890', '-0', '1.5e-400', '0.1']);
      log.push(`numbers -> ${lit}`);
      return text.replace(/(?<=: )-?\d+(\.\d+)?/g, () => (rnd() < 0.3 ? lit : '$&')).replace(/\$&/g, '7');
    }
    case 4:
      log.push('escaped lone surrogates');
      return text.replace(/"content": "/g, () => (rnd() < 0.5 ? '"content": "\\udc00\\ud800' : '"content": "'));
    case 5:
      log.push('duplicate keys');
      return text.replace(/"kind": "(request|response)"/g, (m) =>
        rnd() < 0.5 ? `${m}, "kind": "${choice(rnd, ['request', 'response', 'other'])}"` : m,
      );
    case 6:
      log.push('whitespace padding');
      return ` \n\t${text}\r\n `;
    case 7:
      log.push('raw control char in strings');
      return text.replace(/"content": "/g, () => (rnd() < 0.5 ? '"content": "\u0001' : '"content": "'));
    default:
      log.push('trailing data');
      return text + choice(rnd, [',', ']', ' x', '[]']);
  }
}

const BYTE_MUTATIONS = ['flip', 'page', 'truncate', 'header', 'append'] as const;

function mutateBytes(path: string, rnd: Rnd, log: string[]): void {
  const buf = readFileSync(path);
  const page = buf.readUInt16BE(16) === 1 ? 65536 : buf.readUInt16BE(16) || 4096;
  const kind = choice(rnd, BYTE_MUTATIONS);
  if (kind === 'truncate') {
    const len = rnd() < 0.2 ? int(rnd, 120) : rnd() < 0.5 ? page * int(rnd, Math.max(1, buf.length / page)) : int(rnd, buf.length);
    truncateSync(path, len);
    log.push(`truncate to ${len}`);
    return;
  }
  if (kind === 'flip') {
    const n = 1 + int(rnd, 64);
    for (let i = 0; i < n; i++) {
      const at = rnd() < 0.1 ? int(rnd, 100) : int(rnd, buf.length);
      buf[at]! ^= 1 << int(rnd, 8);
    }
    log.push(`flip ${n} bits`);
  } else if (kind === 'page') {
    const p = int(rnd, Math.floor(buf.length / page));
    const fill = int(rnd, 3);
    for (let i = p * page; i < Math.min(buf.length, (p + 1) * page); i++) buf[i] = fill === 0 ? 0 : fill === 1 ? 0xff : int(rnd, 256);
    log.push(`overwrite page ${p + 1} (${['zeros', 'ones', 'random'][fill]})`);
  } else if (kind === 'header') {
    const field = choice(rnd, [16, 18, 19, 20, 21, 24, 28, 32, 40, 44, 52, 56, 92, 96]);
    const v = int(rnd, 256);
    buf[field] = v;
    if (rnd() < 0.5) buf[field + 1] = int(rnd, 256);
    log.push(`header byte ${field} = ${v}`);
  } else {
    const extra = Buffer.alloc(1 + int(rnd, page * 2), int(rnd, 256));
    writeFileSync(path, Buffer.concat([buf, extra]));
    log.push(`append ${extra.length} bytes`);
    return;
  }
  writeFileSync(path, buf);
}

/** Row and schema level damage, through a writable connection on the copy. */
function mutateRows(path: string, rnd: Rnd, log: string[]): void {
  const db = new Database(path);
  try {
    const snaps = db.prepare('SELECT seq, messages FROM snapshots ORDER BY seq').all() as Array<{ seq: number; messages: string }>;
    const tables = new Set(
      (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>).map((r) => r.name),
    );
    const n = 1 + int(rnd, 3);
    for (let k = 0; k < n; k++) {
      const kind = rnd();
      try {
        if (kind < 0.55 && snaps.length) {
          const s = choice(rnd, snaps);
          let text: string;
          if (rnd() < 0.7) {
            const tree = mutateTree(JSON.parse(s.messages), rnd, log);
            text = spliceDeep(JSON.stringify(tree) ?? 'null');
          } else text = s.messages;
          if (rnd() < 0.3) text = mutateText(text, rnd, log);
          db.prepare('UPDATE snapshots SET messages = ? WHERE seq = ?').run(text, s.seq);
          s.messages = text;
          log.push(`(snapshot seq ${s.seq})`);
        } else if (kind < 0.65 && snaps.length) {
          const s = choice(rnd, snaps);
          const v = choice<unknown>(rnd, [Buffer.from(s.messages.slice(0, 200)), 42, 4.5, Buffer.from([0xff, 0xfe, 0x00])]);
          db.prepare('UPDATE snapshots SET messages = ? WHERE seq = ?').run(v, s.seq);
          log.push(`messages of seq ${s.seq} -> ${Buffer.isBuffer(v) ? 'BLOB' : typeof v}`);
        } else if (kind < 0.75) {
          const col = choice(rnd, ['run_id', 'conversation_id', 'parent_run_id', 'agent_name', 'started_at', 'metadata']);
          const v = choice<unknown>(rnd, [
            123,
            4.5,
            Buffer.from('blob'),
            '\u001b[31mred',
            '',
            'x'.repeat(10_000),
            '2025-13-45T99:99:99',
            null,
          ]);
          const rowids = db.prepare('SELECT rowid FROM runs ORDER BY rowid').pluck().all() as number[];
          db.prepare(`UPDATE runs SET ${col} = ? WHERE rowid = ?`).run(v, rowids.length ? choice(rnd, rowids) : -1);
          log.push(`runs.${col} -> ${Buffer.isBuffer(v) ? 'BLOB' : JSON.stringify(v)?.slice(0, 20)}`);
        } else if (kind < 0.83) {
          const col = choice(rnd, ['state', 'step_index', 'run_id', 'timestamp', 'conversation_id']);
          const v = choice<unknown>(rnd, ['bogus', 'interrupted', 'complete', -1, 2 ** 53, 'abc', Buffer.from('x'), 1.5, null]);
          db.prepare(`UPDATE snapshots SET ${col} = ? WHERE seq = ?`).run(v, snaps.length ? choice(rnd, snaps).seq : -1);
          log.push(`snapshots.${col} -> ${Buffer.isBuffer(v) ? 'BLOB' : JSON.stringify(v)}`);
        } else if (kind < 0.9 && tables.has('media')) {
          const what = int(rnd, 3);
          const rowids = db.prepare('SELECT rowid FROM media ORDER BY rowid').pluck().all() as number[];
          if (what === 0) db.prepare('DELETE FROM media WHERE rowid = ?').run(rowids.length ? choice(rnd, rowids) : -1);
          else if (what === 1) db.exec("UPDATE media SET bytes = CAST('not the bytes' AS TEXT)");
          else db.exec("UPDATE media SET bytes = x'edA080ff'");
          log.push(`media damage ${what}`);
        } else if (kind < 0.95) {
          const run = choice(rnd, [`run-\u0000nul`, 'x'.repeat(5000), '', `'; DROP TABLE runs; --`, '\ud800']);
          db.prepare("INSERT OR IGNORE INTO runs (run_id, conversation_id, metadata, started_at) VALUES (?, ?, '{}', ?)").run(
            run,
            choice(rnd, [null, '', run]),
            choice(rnd, ['', '0', '9999']),
          );
          if (snaps.length) {
            db.prepare("INSERT INTO snapshots (run_id, step_index, timestamp, messages) VALUES (?, 1, '', ?)").run(
              run,
              choice(rnd, snaps).messages,
            );
          }
          log.push(`odd run ${JSON.stringify(run.slice(0, 12))}`);
        } else {
          const ddl = choice(rnd, [
            'DROP TABLE IF EXISTS media',
            'ALTER TABLE snapshots RENAME COLUMN messages TO msgs',
            'ALTER TABLE snapshots DROP COLUMN state',
            'DROP TABLE runs',
            'ALTER TABLE runs RENAME TO runs_old',
            'CREATE TABLE IF NOT EXISTS media (sha256 TEXT, bytes BLOB)',
            'DROP INDEX IF EXISTS idx_snapshots_run',
          ]);
          db.exec(ddl);
          log.push(ddl);
        }
      } catch (e) {
        log.push(`(mutation refused: ${(e as Error).message.slice(0, 40)})`);
      }
    }
  } finally {
    db.close();
  }
}

interface Crash {
  readonly caseNo: number;
  readonly store: string;
  readonly mutations: string;
  readonly detail: string;
}

interface FuzzReport {
  cases: number;
  ok: number;
  expectedErrors: number;
  crashes: Crash[];
  ms: number;
  cliSamples: string[];
}

/** How many cases are damaged ahead of the one exercised: their files age meanwhile (see runFuzz). */
const AHEAD = 4;

interface DamagedCase {
  readonly i: number;
  readonly fixture: string;
  readonly path: string;
  readonly log: readonly string[];
}

function runFuzz(): FuzzReport {
  // the damage and the exercise draw from streams of their own, so that cases can be damaged ahead
  const rnd = prng(SEED);
  const rndUse = prng(SEED ^ 0x5a5a5a5a);
  const report: FuzzReport = { cases: 0, ok: 0, expectedErrors: 0, crashes: [], ms: 0, cliSamples: [] };
  const t0 = performance.now();
  const damage = (i: number): DamagedCase => {
    const fixture = choice(rnd, STORES);
    const path = join(work, `case-${i}.db`);
    copyFileSync(fixture, path);
    const log: string[] = [];
    if (rnd() < 0.3) mutateBytes(path, rnd, log);
    else mutateRows(path, rnd, log);
    utimesSync(path, PAST, PAST);
    return { i, fixture, path, log };
  };
  // a file changed in the last 25 ms makes openStore wait for the kernel's coarse clock to tick
  // (store/sqlite/open.ts settledStamps), and its change time cannot be dated back (utimes moves it
  // too): the cases are damaged AHEAD of their turn, so that the wait has passed by then
  const queue: DamagedCase[] = [];
  for (let i = 0; i < Math.min(AHEAD, CASES); i++) queue.push(damage(i));
  for (let k = 0; k < CASES; k++) {
    const { i, fixture, path, log } = queue.shift()!;
    if (k + AHEAD < CASES) queue.push(damage(k + AHEAD));
    const indexPath = i % INDEX_EVERY === 0 ? join(indexWork, `case-${i}.index.db`) : null;
    const r = exercise(path, rndUse, indexPath);
    report.cases++;
    if (process.env.CONVSEARCH_FUZZ_DEBUG)
      console.log(
        `# case ${i} ${fixture.split('/').pop()} ${r.ok ? 'ok' : r.expected ? 'error' : 'CRASH'}: ${log.join('; ')}${r.ok ? '' : ' => ' + r.detail.split('\n')[0]}`,
      );
    if (r.ok) report.ok++;
    else if (r.expected) report.expectedErrors++;
    else report.crashes.push({ caseNo: i, store: fixture.split('/').pop()!, mutations: log.join('; '), detail: r.detail });
    if (process.env.CONVSEARCH_FUZZ_KEEP === String(i))
      copyFileSync(path, join(process.env.TMPDIR ?? '/tmp', `convsearch-fuzz-case-${i}.db`));
    if (i % CLI_EVERY === 0) report.cliSamples.push(path);
    else for (const p of [path, `${path}-wal`, `${path}-shm`]) rmSync(p, { force: true });
    if (indexPath) for (const s of ['', '-wal', '-shm']) rmSync(indexPath + s, { force: true });
  }
  report.ms = performance.now() - t0;
  return report;
}

let memo: FuzzReport | null = null;

/** The fuzz run, done once whichever test asks first (each test can run on its own). */
function fuzzReport(): FuzzReport {
  return (memo ??= runFuzz());
}

test(`fuzz: ${CASES} damaged stores and hostile snapshots through the library never crash`, () => {
  const r = fuzzReport();
  console.log(
    `# fuzz: ${r.cases} cases in ${(r.ms / 1000).toFixed(1)} s (seed ${SEED.toString(16)}): ${r.ok} clean, ${r.expectedErrors} mapped errors, ${r.crashes.length} crashes`,
  );
  assert.ok(r.cases >= Math.min(CASES, 1000));
  assert.ok(r.ok > r.cases / 4, 'most mutations should leave a searchable store: the mutator is too destructive');
  assert.deepEqual(
    r.crashes.slice(0, 5).map((c) => `case ${c.caseNo} (${c.store}: ${c.mutations})\n${c.detail}`),
    [],
    `${r.crashes.length} crash(es)`,
  );
});

test('fuzz: a sample of the damaged stores through the CLI: exit 0/1/2, one-line errors, no stack traces', async () => {
  const samples = fuzzReport().cliSamples;
  assert.ok(samples.length >= 40, `only ${samples.length} samples`);
  const env = cliEnv(cache);
  const commands = (db: string, k: number): string[][] => {
    const all = [
      ['search', 'refund', 'the', '--scope', 'all', '--no-index', '--format', 'tool'],
      ['search', 'error', 'データ', '--scope', 'all', '--json'],
      ['runs', '--json'],
      ['conversations', '--color', 'never'],
      ['show', 'run-alpha-1', '--color', 'never'],
      ['search', 'timeout', '--conversation', 'conv-alpha', '--color', 'never'],
      ['runs', '--color', 'never'],
      ['show', 'run-alpha-1', '--json'],
    ];
    return [all[(2 * k) % all.length]!, all[(2 * k + 1) % all.length]!].map((c) => [...c, '--db', db]);
  };
  const jobs: Array<() => Promise<[string[], CliResult]>> = [];
  samples.forEach((db, k) => {
    for (const args of commands(db, k)) jobs.push(async () => [args, await cli(args, { env })]);
  });
  const results: Array<[string[], CliResult]> = [];
  let next = 0;
  await Promise.all(
    [0, 1, 2].map(async () => {
      while (next < jobs.length) results.push(await jobs[next++]!());
    }),
  );
  const statuses = new Map<number | null, number>();
  for (const [args, r] of results) {
    const what = `convsearch ${args.join(' ')}`;
    statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
    assert.ok(r.status === 0 || r.status === 1 || r.status === 2, `${what}: exit ${r.status}\n${r.stderr}`);
    assert.ok(!STACK_LINE.test(r.stderr), `${what}: stack trace\n${r.stderr}`);
    assert.ok(!/internal error/.test(r.stderr), `${what}: internal error\n${r.stderr}`);
    if (r.status === 2) {
      // the error is one line, and nothing else but warnings comes with it
      const lines = r.stderr.split('\n').filter(Boolean);
      assert.equal(lines.filter((l) => l.startsWith('convsearch: error:')).length, 1, `${what}\n${r.stderr}`);
      for (const l of lines) assert.match(l, /^convsearch: /, what);
    }
  }
  console.log(
    `# fuzz CLI: ${results.length} runs over ${samples.length} damaged stores, exit statuses ${JSON.stringify(Object.fromEntries(statuses))}`,
  );
  for (const p of samples) for (const s of ['', '-wal', '-shm']) rmSync(p + s, { force: true });
  assert.ok(!existsSync(join(samples[0]!, 'nothing')));
});

// ---------------------------------------------------------------------------------------------
// Named regressions: crashes the fuzzer found, each fixed in src

/** A copy of a fixture store whose snapshot texts went through `rewrite`. */
function rewrittenStore(fixture: string, name: string, rewrite: (messages: Array<Record<string, unknown>>) => string): string {
  const path = join(work, `regression-${name}.db`);
  copyFileSync(join(FIXTURE_DIR, fixture), path);
  const db = new Database(path);
  try {
    for (const r of db.prepare('SELECT seq, messages FROM snapshots').all() as Array<{ seq: number; messages: string }>) {
      db.prepare('UPDATE snapshots SET messages = ? WHERE seq = ?').run(
        rewrite(JSON.parse(r.messages) as Array<Record<string, unknown>>),
        r.seq,
      );
    }
  } finally {
    db.close();
  }
  return path;
}

function nested(depth: number, objects: boolean, leaf: string): string {
  return objects ? '{"a": '.repeat(depth) + leaf + '}'.repeat(depth) : '['.repeat(depth) + leaf + ']'.repeat(depth);
}

// Snapshots nest at most MAX_JSON_DEPTH (1,000) levels, as Python's json.loads allows: just under it,
// the repr walks must not recurse per level; beyond it the snapshot is skipped and reported (next test).
for (const [depth, objects] of [
  [990, false],
  [990, true],
] as const) {
  test(`regression: tool-return content nested ${depth} deep (${objects ? 'objects' : 'arrays'}) renders instead of overflowing the stack`, async () => {
    // toolContentRepr (src/render/multimodal.ts) recursed once per level: RangeError, "internal error", exit 2
    const deepText = nested(depth, objects, '{"kind": "binary", "data": "AAAA", "media_type": "image/png", "identifier": "abc123"}');
    const path = rewrittenStore('small.db', `deep-tool-return-${depth}-${objects}`, (msgs) => {
      for (const m of msgs)
        for (const p of m.parts as Array<Record<string, unknown>>) if (p.part_kind === 'tool-return') p.content = '__DEEP__';
      return JSON.stringify(msgs).split('"__DEEP__"').join(deepText);
    });
    const r = exercise(path, prng(1), join(indexWork, `regression-deep-${depth}-${objects}.index.db`));
    assert.ok(r.ok, r.ok ? '' : r.detail);
    const store = openSqliteReader(path);
    try {
      const source = new HistorySource(store);
      const run = source
        .runs()
        .find((x) => source.replay(x.runId).messages.some((m) => m.message.parts.some((p) => p.get('part_kind') === 'tool-return')))!;
      const text = source
        .replay(run.runId)
        .messages.map((m) => renderRecordMessage(m).text)
        .find((t) => t.includes('BinaryImage('))!;
      // Python's repr: the multimodal dict at the bottom is re-hydrated, the containers print as usual
      const open = objects ? "{'a': ".repeat(depth) : '['.repeat(depth);
      const close = objects ? '}'.repeat(depth) : ']'.repeat(depth);
      assert.ok(
        text.includes(open + "BinaryImage(data=b'\\x00\\x00\\x00', media_type='image/png', _identifier='abc123')" + close),
        text.slice(0, 200),
      );
    } finally {
      store.close();
    }
    const fromCli = await cli(['search', 'refund', '--scope', 'all', '--format', 'tool', '--db', path], { env: cliEnv(cache) });
    assert.ok(fromCli.status === 0 || fromCli.status === 1, fromCli.stderr);
    assert.doesNotMatch(fromCli.stderr, /error/);
  });
}

test('regression: a damaged schema whose SQL text holds newlines and escapes gives a one-line StoreError', async () => {
  // found by the fuzzer (bit flips in sqlite_master): SQLite quotes the bad token, newline included, and the
  // StoreError carried it (src/store/sqlite/open.ts now folds the message onto one line)
  const path = join(work, 'regression-schema-newline.db');
  copyFileSync(join(FIXTURE_DIR, 'small.db'), path);
  // same-length overwrite of the CREATE TABLE text in sqlite_master: an unterminated `quoted` name
  const buf = readFileSync(path);
  const at = buf.indexOf('CREATE TABLE tool_effects (\n    run_id');
  assert.ok(at > 0);
  Buffer.from('(`\n\u001b[2Jyyyyy', 'latin1').copy(buf, at + 'CREATE TABLE tool_effects '.length);
  writeFileSync(path, buf);
  const r = exercise(path, prng(2), null);
  assert.ok(!r.ok, 'the damaged schema should not open');
  assert.ok(r.expected, r.detail);
  assert.ok((r.error as Error) instanceof StoreError);
  assert.doesNotMatch((r.error as Error).message, /[\r\n]/);
  const fromCli = await cli(['runs', '--db', path], { env: cliEnv(cache) });
  assert.equal(fromCli.status, 2);
  assert.equal(fromCli.stderr.split('\n').filter(Boolean).length, 1, fromCli.stderr);
  assert.doesNotMatch(fromCli.stderr, /\u001b/);
});

test('regression: a snapshot nested deeper than 1,000 levels is skipped and reported, never a crash', async () => {
  const deepText = nested(2500, false, '"x"');
  const path = rewrittenStore('small.db', 'deep-tool-return-2500-skip', (msgs) => {
    for (const m of msgs)
      for (const p of m.parts as Array<Record<string, unknown>>) if (p.part_kind === 'tool-return') p.content = '__DEEP__';
    return JSON.stringify(msgs).split('"__DEEP__"').join(deepText);
  });
  const r = exercise(path, prng(1), join(indexWork, 'regression-deep-2500-skip.index.db'));
  assert.ok(r.ok, r.ok ? '' : r.detail);
  const fromCli = await cli(['search', 'billing', '--scope', 'all', '--format', 'tool', '--db', path], {
    env: cliEnv(join(indexWork, 'deep-skip-cache')),
  });
  assert.ok(fromCli.status === 0 || fromCli.status === 1, fromCli.stderr);
  assert.match(fromCli.stderr, /warning: skipped \d+ unreadable snapshots? in run/);
  assert.doesNotMatch(fromCli.stderr, /error|\n\s+at /);
});
