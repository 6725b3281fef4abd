/**
 * `npm run bench` (its full run, or `-- --backends-only`): the bench store copied into a FileStepStore tree, a throwaway Postgres
 * and a throwaway Redis (each in the layout the harness writes), and the raw read of every run's
 * complete snapshots through each reader, against the same read from the SQLite file.
 *
 * Copies: File payloads and Postgres rows carry the SQLite `messages` text unchanged (both are
 * `json.dumps`); Redis payloads are the older `json.dumps` layout under the newer `runs:all` set.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { Redis } from 'ioredis';
import { MediaCache } from '../../src/history/media.js';
import { RunReplayer } from '../../src/history/replay.js';
import { openStoreReader } from '../../src/store/open-reader.js';
import { startPostgres, startRedis, type PgServer, type RedisServer } from '../lib/servers.js';

const require = createRequire(import.meta.url);
const PREFIX = 'pydantic-ai-harness:step';

interface RunRow {
  run_id: string;
  conversation_id: string | null;
  parent_run_id: string | null;
  agent_name: string | null;
  metadata: string;
  started_at: string;
}
interface SnapRow {
  seq: number;
  run_id: string;
  step_index: number;
  conversation_id: string | null;
  parent_run_id: string | null;
  agent_name: string | null;
  timestamp: string;
  state: string;
  messages: string;
}

const q = (v: string | null): string => (v === null ? 'null' : JSON.stringify(v));

function runJson(r: RunRow): string {
  return `{"run_id": ${q(r.run_id)}, "conversation_id": ${q(r.conversation_id)}, "parent_run_id": ${q(r.parent_run_id)}, "agent_name": ${q(r.agent_name)}, "metadata": ${r.metadata}, "started_at": ${q(r.started_at)}, "registration_id": null}`;
}

/** `json.dumps` of the payload dict (ids are ASCII in the bench store, so JSON.stringify spells them alike). */
function payloadJson(s: SnapRow, idempotency: boolean): string {
  const head = `{"run_id": ${q(s.run_id)}, "step_index": ${s.step_index}, "conversation_id": ${q(s.conversation_id)}, "parent_run_id": ${q(s.parent_run_id)}, "agent_name": ${q(s.agent_name)}, "timestamp": ${q(s.timestamp)}, "state": ${q(s.state)}, "messages": ${s.messages}`;
  return idempotency ? `${head}, "idempotency_key": null}` : `${head}}`;
}

function sqliteRows(store: string): { runs: RunRow[]; snapshots: () => IterableIterator<SnapRow> } {
  const Database = require('better-sqlite3') as typeof BetterSqlite3;
  const db = new Database(`file:${store}?mode=ro&immutable=1`, { readonly: true });
  return {
    runs: db
      .prepare('SELECT run_id, conversation_id, parent_run_id, agent_name, metadata, started_at FROM runs ORDER BY rowid')
      .all() as RunRow[],
    snapshots: () =>
      db
        .prepare(
          'SELECT seq, run_id, step_index, conversation_id, parent_run_id, agent_name, timestamp, state, messages FROM snapshots ORDER BY seq',
        )
        .iterate() as IterableIterator<SnapRow>,
  };
}

export function copyToFile(store: string, root: string): void {
  rmSync(root, { recursive: true, force: true });
  const { runs, snapshots } = sqliteRows(store);
  const next = new Map<string, number>();
  for (const r of runs) {
    mkdirSync(join(root, r.run_id, 'snapshots'), { recursive: true });
    writeFileSync(join(root, r.run_id, 'run.json'), runJson(r));
  }
  for (const s of snapshots()) {
    const n = next.get(s.run_id) ?? 0;
    next.set(s.run_id, n + 1);
    writeFileSync(join(root, s.run_id, 'snapshots', `${n}.json`), payloadJson(s, true));
  }
}

const DDL = (t: string): string => `
CREATE TABLE ${t}_runs (run_id TEXT PRIMARY KEY, conversation_id TEXT, parent_run_id TEXT, agent_name TEXT, metadata TEXT NOT NULL, started_at TEXT NOT NULL, registration_id TEXT);
CREATE INDEX ${t}_runs_conv_idx ON ${t}_runs (conversation_id);
CREATE INDEX ${t}_runs_parent_idx ON ${t}_runs (parent_run_id);
CREATE TABLE ${t}_snapshots (seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, run_id TEXT NOT NULL, step_index INTEGER NOT NULL, conversation_id TEXT, parent_run_id TEXT, agent_name TEXT, timestamp TEXT NOT NULL, state TEXT NOT NULL DEFAULT 'complete', messages TEXT NOT NULL, idempotency_key TEXT);
CREATE INDEX ${t}_snapshots_run_idx ON ${t}_snapshots (run_id, seq);`;

export async function copyToPostgres(store: string, server: PgServer, db: string): Promise<string> {
  server.createDb(db);
  const url = server.url(db);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(DDL('step_persistence'));
  const { runs, snapshots } = sqliteRows(store);
  await client.query('BEGIN');
  for (const r of runs) {
    await client.query('INSERT INTO step_persistence_runs VALUES ($1, $2, $3, $4, $5, $6, NULL)', [
      r.run_id,
      r.conversation_id,
      r.parent_run_id,
      r.agent_name,
      r.metadata,
      r.started_at,
    ]);
  }
  let batch: SnapRow[] = [];
  const flush = async (): Promise<void> => {
    if (batch.length === 0) return;
    const values = batch.map(
      (_, i) =>
        `($${i * 9 + 1}, $${i * 9 + 2}, $${i * 9 + 3}, $${i * 9 + 4}, $${i * 9 + 5}, $${i * 9 + 6}, $${i * 9 + 7}, $${i * 9 + 8}, $${i * 9 + 9})`,
    );
    await client.query(
      `INSERT INTO step_persistence_snapshots (seq, run_id, step_index, conversation_id, parent_run_id, agent_name, timestamp, state, messages) OVERRIDING SYSTEM VALUE VALUES ${values.join(', ')}`,
      batch.flatMap((s) => [
        s.seq,
        s.run_id,
        s.step_index,
        s.conversation_id,
        s.parent_run_id,
        s.agent_name,
        s.timestamp,
        s.state,
        s.messages,
      ]),
    );
    batch = [];
  };
  for (const s of snapshots()) {
    batch.push(s);
    if (batch.length >= 100) await flush();
  }
  await flush();
  await client.query('COMMIT');
  await client.query('VACUUM ANALYZE');
  await client.end();
  return url;
}

export async function copyToRedis(store: string, server: RedisServer, db: number): Promise<string> {
  const url = server.url(db);
  const client = new Redis({ host: '127.0.0.1', port: server.port, db, lazyConnect: true, disableClientInfo: true });
  await client.connect();
  const { runs, snapshots } = sqliteRows(store);
  let p = client.pipeline();
  let queued = 0;
  const flush = async (force = false): Promise<void> => {
    if (queued === 0 || (!force && queued < 200)) return;
    await p.exec();
    p = client.pipeline();
    queued = 0;
  };
  for (const r of runs) {
    p.set(`${PREFIX}:run:{${r.run_id}}`, runJson(r));
    p.sadd(`${PREFIX}:runs:all`, r.run_id);
    if (r.conversation_id !== null) p.sadd(`${PREFIX}:runs:conversation:${r.conversation_id}`, r.run_id);
    queued += 3;
    await flush();
  }
  const next = new Map<string, number>();
  for (const s of snapshots()) {
    const n = (next.get(s.run_id) ?? 0) + 1;
    next.set(s.run_id, n);
    p.set(`${PREFIX}:snapshot:{${s.run_id}}:${n}`, payloadJson(s, false));
    p.zadd(`${PREFIX}:snapshots:{${s.run_id}}`, String(n), `${n}:${s.state}`);
    p.set(`${PREFIX}:snapshots:seq:{${s.run_id}}`, String(n));
    queued += 3;
    await flush();
  }
  await flush(true);
  client.disconnect();
  return url;
}

/** Starts the servers and copies the store into each backend; `targets` maps a backend to its `--db` value. */
export async function prepareBackends(store: string, dir: string): Promise<{ targets: Map<string, string>; stop: () => void }> {
  const targets = new Map<string, string>();
  const stops: Array<() => void> = [];
  const t = (label: string, ms: number): void => void process.stderr.write(`  copied into ${label} in ${(ms / 1000).toFixed(1)} s\n`);
  let start = performance.now();
  copyToFile(store, join(dir, 'file-store'));
  t('a FileStepStore tree', performance.now() - start);
  targets.set('file', join(dir, 'file-store'));
  const pgServer = await startPostgres();
  if (typeof pgServer === 'string') process.stderr.write(`  ${pgServer}\n`);
  else {
    stops.push(pgServer.stop);
    start = performance.now();
    targets.set('postgres', await copyToPostgres(store, pgServer, 'bench'));
    t('Postgres', performance.now() - start);
  }
  const redisServer = await startRedis();
  if (typeof redisServer === 'string') process.stderr.write(`  ${redisServer}\n`);
  else {
    stops.push(redisServer.stop);
    start = performance.now();
    targets.set('redis', await copyToRedis(store, redisServer, 0));
    t('Redis', performance.now() - start);
  }
  return {
    targets,
    stop: () => {
      for (const s of stops) s();
    },
  };
}

/** Phase (own process): open, stamp, then every run's record replayed from its complete snapshots. */
export function phaseBackendReplay(_kind: string, target: string): { ms: number; extra: Record<string, number> } {
  const t0 = performance.now();
  const r = openStoreReader(target);
  const f = performance.now();
  r.content(new Map(), 0); // the content digest an index check pays when the store changed
  const contentMs = performance.now() - f;
  const media = new MediaCache(r);
  let messages = 0;
  for (const run of r.runs()) {
    const replayer = new RunReplayer(run.runId, media);
    for (const s of r.completeSnapshots(run.runId)) replayer.add(s);
    messages += replayer.result().messages.length;
  }
  r.close();
  return { ms: performance.now() - t0, extra: { messages, contentMs } };
}

/** Phase (own process): open, stamp, list runs, read every run's complete snapshots. */
export function phaseBackendRead(_kind: string, target: string): { ms: number; extra: Record<string, number> } {
  const t0 = performance.now();
  let chars = 0;
  let snapshots = 0;
  // every backend, SQLite included, through the same seam
  const r = openStoreReader(target);
  const f = performance.now();
  r.content(new Map(), 0); // the content digest an index check pays when the store changed
  const contentMs = performance.now() - f;
  for (const run of r.runs()) {
    for (const s of r.completeSnapshots(run.runId)) {
      chars += typeof s.messages === 'string' ? s.messages.length : 0;
      snapshots++;
    }
  }
  r.close();
  return { ms: performance.now() - t0, extra: { snapshots, mchars: Math.round(chars / 1e6), contentMs } };
}

/**
 * Phase (own process): what a warm search asks of the store before it answers from the index: open a
 * reader (for a server: start the driver thread, load the driver, connect) and take its stamp, given the
 * one taken before as an index would give it (Postgres then needs no stamp query while nothing
 * committed). Seven times, each with a new reader; the median, and the first (which also loads
 * convsearch's modules and takes the whole stamp).
 */
export function phaseBackendStamp(_kind: string, target: string): { ms: number; extra: Record<string, number> } {
  const times: number[] = [];
  const stampTimes: number[] = [];
  let recorded: string | null = null;
  for (let i = 0; i < 7; i++) {
    const t0 = performance.now();
    const r = openStoreReader(target);
    const t1 = performance.now();
    recorded = r.stamp(recorded);
    times.push(performance.now() - t0);
    stampTimes.push(performance.now() - t1);
    r.close();
  }
  const first = times[0]!;
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
  return { ms: median(times), extra: { firstMs: first, stampMs: median(stampTimes) } };
}
