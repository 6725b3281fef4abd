/**
 * `npm run bench -- --shared-index [--fleet-runs 20000] [--stores 10] [--readers 8] [--appended 100] [--regenerate]`: the
 * shared index (issue 23) on a throwaway Postgres server (scripts/lib/servers.ts) and a simulated fleet
 * of small-run SQLite stores: `index sync` time and the index's size on the server; a whole-process
 * search through it from an empty $XDG_CACHE_HOME against building the local indexes first; the rows
 * and bytes one search reads (pg_stat_user_tables, pg_statio_user_tables); and the latencies of
 * concurrent readers while a sync folds in runs appended to every store (`--appended`, default 100 per
 * store). The stores are generated once and measured on copies. Figures are printed, never asserted.
 */
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPostgres, type PgServer } from '../lib/servers.js';
import { appendRun } from './mutations.js';
import { arg, flag, fmt, percentile } from './phase.js';
import { ensureStore } from './scaling.js';
import { writeSyntheticStore } from './synthetic-store.js';
import { BIN } from './whole-process.js';

const SCHEMA = 'convsearch_index';

const median = (xs: readonly number[]): number =>
  percentile(
    [...xs].sort((a, b) => a - b),
    50,
  );

/** One whole `convsearch` process: its wall time (ms); anything but exit 0 or 1 is an error. */
function timed(args: string[], env: NodeJS.ProcessEnv = process.env): number {
  const t = performance.now();
  const r = spawnSync(process.execPath, [BIN, ...args], { stdio: ['ignore', 'ignore', 'pipe'], env, encoding: 'utf8' });
  const ms = performance.now() - t;
  if (r.status !== 0 && r.status !== 1) throw new Error(`convsearch ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}

/** The same, started now and awaited later (a reader during a sync). */
function timedAsync(args: string[]): Promise<number> {
  const t = performance.now();
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'ignore', 'ignore'] });
  return new Promise((res, rej) =>
    child.on('close', (status) => (status === 0 || status === 1 ? res(performance.now() - t) : rej(new Error(`reader exited ${status}`)))),
  );
}

const sql = (pg: PgServer, db: string, text: string): string[] => pg.psql(db, text).trim().split('\n').filter(Boolean);

/** What the server read for the index since the last reset: rows (scans and index fetches) and 8 kB blocks (hit or read). */
function readCounts(pg: PgServer, db: string): { rows: number; blocks: number; tables: number } {
  const [rows] = sql(
    pg,
    db,
    `SELECT coalesce(sum(coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0)), 0), count(*) FILTER (WHERE coalesce(seq_scan, 0) + coalesce(idx_scan, 0) > 0) FROM pg_stat_user_tables WHERE schemaname = '${SCHEMA}'`,
  );
  const [blocks] = sql(
    pg,
    db,
    `SELECT coalesce(sum(coalesce(heap_blks_read, 0) + coalesce(heap_blks_hit, 0) + coalesce(idx_blks_read, 0) + coalesce(idx_blks_hit, 0) + coalesce(toast_blks_read, 0) + coalesce(toast_blks_hit, 0)), 0) FROM pg_statio_user_tables WHERE schemaname = '${SCHEMA}'`,
  );
  const [r, t] = rows!.split('|');
  return { rows: Number(r), blocks: Number(blocks), tables: Number(t) };
}

async function waitFor(cond: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}

export async function sharedIndexBench(): Promise<void> {
  const fleetRuns = Number(arg('fleet-runs', '20000'));
  const storeCount = Number(arg('stores', '10'));
  const readers = Number(arg('readers', '8'));
  const dir = join(tmpdir(), 'convsearch-bench', 'fleet');
  mkdirSync(dir, { recursive: true });
  const perStore = Math.ceil(fleetRuns / storeCount);
  const stores = Array.from({ length: storeCount }, (_, i) => join(dir, `store-${i}-${perStore}.db`));
  const t0 = performance.now();
  for (const [i, s] of stores.entries())
    ensureStore(s, (at) => void writeSyntheticStore(at, { targetBytes: 0, seed: 100 + i, smallRuns: perStore }), flag('regenerate'));
  const work = stores.map((_, i) => join(dir, `work-${i}.db`));
  for (const [i, s] of stores.entries()) {
    for (const x of ['', '-wal', '-shm']) rmSync(work[i]! + x, { force: true });
    copyFileSync(s, work[i]!);
  }
  const lines = [`fleet: ${storeCount} stores × ${perStore} small runs (generated or reused in ${fmt(performance.now() - t0)})`];
  const pg = await startPostgres();
  if (typeof pg === 'string') throw new Error(`--shared-index needs a Postgres server: ${pg}`);
  const cache = mkdtempSync(join(tmpdir(), 'convsearch-bench-cache-'));
  try {
    pg.createDb('fleet');
    const url = pg.url('fleet');
    const dbs = work.flatMap((s) => ['--db', s]);

    const sync = timed(['index', 'sync', '--index', url, ...dbs, '--quiet']);
    const [size] = sql(
      pg,
      'fleet',
      `SELECT pg_size_pretty(sum(pg_total_relation_size(c.oid))) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = '${SCHEMA}' AND c.relkind IN ('r', 'p')`,
    );
    lines.push(`index sync from nothing (one process, ${storeCount} stores): ${fmt(sync)}; index on the server: ${size}`);
    const resync = timed(['index', 'sync', '--index', url, ...dbs, '--quiet']);
    lines.push(`index sync with nothing changed: ${fmt(resync)}`);

    // query words of middling frequency, from the first store's postings
    pg.psql('fleet', 'ANALYZE');
    const words = sql(
      pg,
      'fleet',
      `SELECT term FROM (SELECT term, sum(length(data)) AS n FROM ${SCHEMA}.s1_postings GROUP BY term) x ORDER BY n DESC, term OFFSET 200 LIMIT 2`,
    );
    const search = ['search', ...words, '--scope', 'all', ...dbs];
    lines.push(`query: ${words.join(' ')} --scope all over the ${storeCount} stores`);

    // an empty cache: the shared index needs nothing local; the local index is built first
    const env = (sub: string): NodeJS.ProcessEnv => {
      const d = join(cache, sub);
      rmSync(d, { recursive: true, force: true });
      mkdirSync(d, { recursive: true });
      return { ...process.env, XDG_CACHE_HOME: d, CONVSEARCH_INDEX: '' };
    };
    const shared: number[] = [];
    for (let i = 0; i < 5; i++) shared.push(timed([...search, '--index', url], env(`shared-${i}`)));
    const coldLocal = timed(search, env('local'));
    const warmLocal: number[] = [];
    for (let i = 0; i < 5; i++)
      warmLocal.push(timed(search, { ...process.env, XDG_CACHE_HOME: join(cache, 'local'), CONVSEARCH_INDEX: '' }));
    const noIndex = timed([...search, '--no-index']);
    lines.push(
      `whole process, empty $XDG_CACHE_HOME, through the shared index: median ${fmt(median(shared))} (max ${fmt(Math.max(...shared))}, 5 runs)`,
      `whole process, empty $XDG_CACHE_HOME, local index built first: ${fmt(coldLocal)}; then warm: median ${fmt(median(warmLocal))}`,
      `whole process, --no-index: ${fmt(noIndex)}`,
    );

    // what one search reads on the server (a session's counts are published when it ends)
    pg.psql('fleet', 'SELECT pg_stat_reset()');
    timed([...search, '--index', url]);
    await waitFor(() => readCounts(pg, 'fleet').rows > 0, 5000);
    const read = readCounts(pg, 'fleet');
    const [total] = sql(
      pg,
      'fleet',
      `SELECT sum(c.reltuples)::bigint FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = '${SCHEMA}' AND c.relkind = 'r'`,
    );
    lines.push(
      `one search read ${read.rows} rows of ${total} in ${read.tables} tables, ${read.blocks} blocks (${((read.blocks * 8) / 1024).toFixed(1)} MB counted as 8 kB blocks, cache hits included)`,
    );

    // the same readers with no sync: what the machine's cores alone do to them
    const quiet = await Promise.all(Array.from({ length: readers }, () => timedAsync([...search, '--index', url])));
    lines.push(`${readers} concurrent readers, no sync: median ${fmt(median(quiet))}, max ${fmt(Math.max(...quiet))}`);

    // readers while a sync folds in what changed: runs appended to every store (readers keep the last commit)
    const appended = Number(arg('appended', '100'));
    for (const w of work) for (let i = 0; i < appended; i++) appendRun(w);
    const alone = timed([...search, '--index', url]);
    const writer = spawn(process.execPath, [BIN, 'index', 'sync', '--index', url, ...dbs, '--quiet'], { stdio: 'ignore' });
    const tSync = performance.now();
    const writing = await waitFor(
      () =>
        sql(
          pg,
          'fleet',
          "SELECT count(*) FROM pg_stat_activity WHERE backend_xid IS NOT NULL AND state <> 'idle' AND query NOT LIKE '%pg_stat_activity%'",
        )[0] !== '0',
      120_000,
    );
    // sessions waiting on a lock meanwhile (sampled every 100 ms): a reader blocked by the writer shows here
    let lockWaits = 0;
    let sampling = true;
    const sampler = (async (): Promise<void> => {
      while (sampling) {
        const [n] = sql(pg, 'fleet', "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'");
        lockWaits = Math.max(lockWaits, Number(n));
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const during = await Promise.all(Array.from({ length: readers }, () => timedAsync([...search, '--index', url])));
    sampling = false;
    await sampler;
    const ended = await new Promise<number | null>((res) => writer.on('close', res));
    lines.push(
      `${readers} concurrent readers (stale index: ${appended} runs appended to each store; alone: ${fmt(alone)}) during the sync that folds them in (${writing ? 'started once it wrote' : 'the sync never showed writing'}; sync exit ${ended}, ${fmt(performance.now() - tSync)}): median ${fmt(median(during))}, max ${fmt(Math.max(...during))}; at most ${lockWaits} sessions waiting on a lock at once`,
    );
  } finally {
    pg.stop();
    rmSync(cache, { recursive: true, force: true });
  }
  process.stdout.write(lines.join('\n') + '\n');
}
