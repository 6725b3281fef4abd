/**
 * Memory bound (issue #5): a ~200 MB store of very large snapshots (few runs, big messages re-saved at
 * every step, as the Python store does) must be searchable with a 256 MB V8 heap, with and without the
 * persistent index. Reports peak RSS. Skipped with CONVSEARCH_SKIP_SLOW=1.
 *
 * The store is written straight with better-sqlite3 in one transaction (fast), in the Python store's
 * schema and `json.dumps` text; messages stay below the 64 KiB media-externalization threshold, so they
 * are inline in every snapshot, exactly like a long tool-heavy run.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';

import {
  pyIsoformat,
  request,
  response,
  textPart,
  toolCallPart,
  toolReturnPart,
  userPromptPart,
  type JsonObject,
} from '../../scripts/lib/messages.js';
import { pyJsonDumpsAscii } from '../../scripts/lib/py-json.js';
import { schemaStatements } from '../../scripts/lib/store-writer.js';
import { BIN } from '../helpers/cli.js';
import { prng, storeDigest, tempDir } from '../helpers/hardening.js';

const SKIP = process.env.CONVSEARCH_SKIP_SLOW === '1';
const TARGET_BYTES = Number(process.env.CONVSEARCH_MEMORY_STORE_MB ?? 200) * 1024 * 1024;
const HEAP_MB = 256;
const RUNS = 3;
/** Inline text per tool return: under the 64 KiB externalization threshold. */
const RETURN_CHARS = 48_000;

const VOCAB = Array.from({ length: 5000 }, (_, i) => `w${(i * 2654435761) % 100000}`);

function words(rnd: () => number, chars: number): string {
  const out: string[] = [];
  let n = 0;
  while (n < chars) {
    const w = VOCAB[Math.floor(rnd() * rnd() * VOCAB.length)]!;
    out.push(w);
    n += w.length + 1;
  }
  return out.join(' ');
}

/** Writes the store; returns its size and the number of snapshots. */
function generate(path: string): { bytes: number; snapshots: number; steps: number } {
  const rnd = prng(0xbead);
  const db = new Database(path);
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  for (const sql of schemaStatements('newest')) db.exec(sql);
  const insertRun = db.prepare(
    "INSERT INTO runs (run_id, conversation_id, parent_run_id, agent_name, metadata, started_at, registration_id) VALUES (?, ?, NULL, 'digger', '{}', ?, NULL)",
  );
  const insertSnap = db.prepare(
    "INSERT INTO snapshots (run_id, step_index, conversation_id, parent_run_id, agent_name, timestamp, state, messages, idempotency_key) VALUES (?, ?, ?, NULL, 'digger', ?, 'complete', ?, NULL)",
  );
  // per step: a tool call, a ~48 KB tool return; the whole history is re-saved each step
  const perStep = RETURN_CHARS + 600;
  // RUNS * perStep * S^2 / 2 ≈ TARGET_BYTES
  const steps = Math.max(2, Math.round(Math.sqrt((2 * TARGET_BYTES) / (RUNS * perStep))));
  let snapshots = 0;
  const t0 = Date.UTC(2026, 1, 1) * 1000;
  db.transaction(() => {
    for (let r = 0; r < RUNS; r++) {
      const runId = `big-run-${r}`;
      const conv = `big-conv-${r % 2}`;
      const start = t0 + r * 3_600_000_000;
      insertRun.run(runId, conv, pyIsoformat(start));
      const msgs: string[] = [
        pyJsonDumpsAscii([
          request([userPromptPart(`dig through the archive for run ${r}: needleword${r} please`, { timestamp: start })], {
            timestamp: start,
            runId,
            conversationId: conv,
          }),
        ]).slice(1, -1),
      ];
      for (let s = 1; s <= steps; s++) {
        const at = start + s * 10_000_000;
        const call = response([toolCallPart('read_archive', { shard: s, run: r }, `call-${r}-${s}`)], {
          timestamp: at,
          runId,
          conversationId: conv,
          modelName: 'big-model',
        });
        const text = words(rnd, RETURN_CHARS) + (s === Math.ceil(steps / 2) ? ` haystackneedle${r}` : '');
        const ret = request([toolReturnPart('read_archive', text, `call-${r}-${s}`, { timestamp: at + 1_000_000 }) as JsonObject], {});
        msgs.push(pyJsonDumpsAscii([call]).slice(1, -1), pyJsonDumpsAscii([ret]).slice(1, -1));
        if (s === steps)
          msgs.push(
            pyJsonDumpsAscii([
              response([textPart(`done with run ${r}: needleword${r} found`)], { timestamp: at + 2_000_000, runId, conversationId: conv }),
            ]).slice(1, -1),
          );
        insertSnap.run(runId, s, conv, pyIsoformat(at + 1_500_000), '[' + msgs.join(', ') + ']');
        snapshots++;
      }
    }
  })();
  db.pragma('journal_mode = WAL'); // the header the Python store leaves
  db.close();
  return { bytes: statSync(path).size, snapshots, steps };
}

interface Measured {
  status: number | null;
  stdout: string;
  stderr: string;
  maxRssKb: number;
  seconds: number;
}

/** Runs the CLI under a 256 MB heap; peak RSS from /usr/bin/time -v when present, else from a wrapper. */
function measure(args: string[], env: NodeJS.ProcessEnv): Promise<Measured> {
  const hasTime = existsSync('/usr/bin/time');
  const node = [`--max-old-space-size=${HEAP_MB}`];
  const argv = hasTime
    ? ['/usr/bin/time', ['-v', process.execPath, ...node, BIN, ...args]]
    : [
        process.execPath,
        [
          ...node,
          '--input-type=module',
          '-e',
          `process.argv=[process.argv[0], ${JSON.stringify(BIN)}, ...${JSON.stringify(args)}];` +
            `process.on('exit',()=>process.stderr.write('\\nMaximum resident set size (kbytes): '+process.resourceUsage().maxRSS+'\\n'));` +
            `await import(${JSON.stringify(new URL(`file://${BIN}`).href)});`,
        ],
      ];
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(argv[0] as string, argv[1] as string[], { env: { ...process.env, NO_COLOR: '1', ...env } });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', reject);
    child.on('close', (status) => {
      const stderr = Buffer.concat(err).toString();
      const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(stderr);
      const exit = /Exit status: (\d+)/.exec(stderr);
      resolve({
        status: hasTime && exit ? Number(exit[1]) : status,
        stdout: Buffer.concat(out).toString(),
        stderr: hasTime
          ? stderr.split('\tCommand being timed')[0]!.replace(/Command (exited with non-zero status|terminated by signal) \d+\n?/, '')
          : stderr.replace(/\nMaximum resident.*\n$/, ''),
        maxRssKb: rss ? Number(rss[1]) : NaN,
        seconds: (performance.now() - t0) / 1000,
      });
    });
  });
}

/** Heap still used (after a full GC) once every run of the store is replayed and held, in a child process. */
function retainedHeapMb(db: string): Promise<number> {
  const dist = new URL('../../src/', import.meta.url).href;
  const script = `
    const { openSqliteReader } = await import(${JSON.stringify(dist + 'store/sqlite/reader.js')});
    const { HistorySource } = await import(${JSON.stringify(dist + 'history/source.js')});
    const store = openSqliteReader(${JSON.stringify(db)});
    const source = new HistorySource(store);
    gc();
    const base = process.memoryUsage().heapUsed;
    const held = source.runs().map((r) => source.replay(r.runId));
    gc();
    process.stdout.write(String((process.memoryUsage().heapUsed - base) / 1048576 + 0 * held.length));
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', `--max-old-space-size=${HEAP_MB}`, '--input-type=module', '-e', script]);
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (err += b.toString()));
    child.on('close', (code) => (code === 0 ? resolve(Number(out)) : reject(new Error(`retained-heap probe failed (${code}): ${err}`))));
  });
}

test(`a ~${Math.round(TARGET_BYTES / 1048576)} MB store of large re-saved snapshots searches within a ${HEAP_MB} MB heap`, {
  skip: SKIP ? 'CONVSEARCH_SKIP_SLOW=1' : false,
  timeout: 180_000,
}, async () => {
  const dir = tempDir('memory');
  const cache = tempDir('memory-cache');
  const db = join(dir, 'big.db');
  const g0 = performance.now();
  const gen = generate(db);
  const genSeconds = (performance.now() - g0) / 1000;
  const before = storeDigest(db, ['']);
  try {
    const env = { XDG_CACHE_HOME: cache };
    const lines: string[] = [
      `store: ${(gen.bytes / 1048576).toFixed(0)} MB, ${RUNS} runs x ${gen.steps} snapshots (${gen.snapshots} rows, messages up to ${RETURN_CHARS / 1000} KB), written in ${genSeconds.toFixed(1)} s`,
    ];
    const cases: Array<[string, string[], number]> = [
      ['search --no-index', ['search', 'haystackneedle1', 'needleword2', '--db', db, '--scope', 'all', '--json', '--no-index'], 0],
      ['search (builds the index)', ['search', 'haystackneedle1', 'needleword2', '--db', db, '--scope', 'all', '--json'], 0],
      ['search (index ready)', ['search', 'haystackneedle0', '--db', db, '--scope', 'all', '--json'], 0],
      ['runs', ['runs', '--db', db, '--json'], 0],
      ['show', ['show', 'big-run-1', '--db', db, '--json'], 0],
    ];
    for (const [name, args, expected] of cases) {
      const m = await measure(args, env);
      assert.equal(m.status, expected, `${name}: exit ${m.status}\n${m.stderr.slice(0, 2000)}`);
      assert.doesNotMatch(m.stderr, /heap out of memory|FATAL|error/i, name);
      if (name.startsWith('search')) {
        const hits = (JSON.parse(m.stdout) as { hits: Array<{ run_id: string }> }).hits.map((h) => h.run_id);
        assert.ok(hits.length > 0, name);
      }
      lines.push(`${name}: exit ${m.status}, peak RSS ${(m.maxRssKb / 1024).toFixed(0)} MB, ${m.seconds.toFixed(1)} s`);
    }
    // What a replay keeps: the records (parsed messages), not the snapshot texts they were parsed from.
    // (Strings sliced out of a snapshot text would keep the whole text alive: about the store's size.)
    const retained = await retainedHeapMb(db);
    lines.push(`heap retained by the replayed records of all runs: ${retained.toFixed(0)} MB`);
    assert.ok(
      retained < 64,
      `replayed records retain ${retained.toFixed(0)} MB of heap for a ${(gen.bytes / 1048576).toFixed(0)} MB store`,
    );
    assert.deepEqual(storeDigest(db, ['']), before, 'the store changed');
    console.log(lines.map((l) => `# memory: ${l}`).join('\n'));
  } finally {
    // CONVSEARCH_MEMORY_KEEP=path keeps the store there for profiling
    if (process.env.CONVSEARCH_MEMORY_KEEP) renameSync(db, process.env.CONVSEARCH_MEMORY_KEEP);
    for (const s of ['', '-wal', '-shm']) rmSync(db + s, { force: true });
  }
});
