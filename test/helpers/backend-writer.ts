/**
 * A live writer for the server backend tests, run as a child process: appends `count` snapshots to one
 * run the way the upstream store classes write them, and prunes to the newest `keep` as
 * `max_snapshots_per_run` does, pausing between writes.
 *
 *   node backend-writer.js redis <url> <prefix> <run_id> <count> <keep>
 *   node backend-writer.js postgres <url> <table> <run_id> <count> <keep>
 *
 * Without arguments (the test runner loading it) it does nothing.
 *
 * Redis: INCR, SET payload, ZADD member (no MULTI, like RedisStepStore), then DEL + ZREM of the
 * oldest. Postgres: one transaction per snapshot (INSERT, DELETE of the oldest), like PostgresStepStore.
 */
import pg from 'pg';
import { Redis } from 'ioredis';

const [kind, url, prefix, runId, countText, keepText] = process.argv.slice(2);
const count = Number(countText);
const keep = Number(keepText);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function messages(step: number): string {
  const parts = Array.from({ length: step + 1 }, (_, i) => ({
    parts: [{ content: `live message ${i} ${'x'.repeat(2000)}`, timestamp: '2025-01-01T00:00:00Z', part_kind: 'user-prompt' }],
    kind: 'request',
  }));
  return JSON.stringify(parts);
}

async function redis(): Promise<void> {
  const u = new URL(url!);
  const client = new Redis({
    host: u.hostname,
    port: Number(u.port),
    db: Number(u.pathname.slice(1) || '0'),
    lazyConnect: true,
    disableClientInfo: true,
  });
  await client.connect();
  const seqKey = `${prefix}:snapshots:seq:{${runId}}`;
  const index = `${prefix}:snapshots:{${runId}}`;
  for (let i = 0; i < count; i++) {
    const seq = await client.incr(seqKey);
    const payload = `{"run_id":${JSON.stringify(runId)},"step_index":${seq},"timestamp":"2025-01-01T00:00:0${i % 10}Z","messages":${messages(i % 20)},"conversation_id":null,"parent_run_id":null,"agent_name":null,"state":"complete"}`;
    await client.set(`${prefix}:snapshot:{${runId}}:${seq}`, payload);
    await client.zadd(index, String(seq), `${seq}:complete`);
    const members = await client.zrange(index, '0', '-1');
    for (const m of members.slice(0, Math.max(0, members.length - keep))) {
      await client.del(`${prefix}:snapshot:{${runId}}:${m.split(':')[0]}`);
      await client.zrem(index, m);
    }
    await sleep(2);
  }
  client.disconnect();
}

async function postgres(): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  for (let i = 0; i < count; i++) {
    await client.query('BEGIN');
    await client.query(
      `INSERT INTO ${prefix}_snapshots (run_id, step_index, timestamp, state, messages) VALUES ($1, $2, '2025-01-01T00:00:00+00:00', 'complete', $3)`,
      [runId, i, messages(i % 20)],
    );
    await client.query(
      `DELETE FROM ${prefix}_snapshots WHERE run_id = $1 AND seq NOT IN (SELECT seq FROM ${prefix}_snapshots WHERE run_id = $1 ORDER BY seq DESC LIMIT $2)`,
      [runId, keep],
    );
    await client.query('COMMIT');
    await sleep(2);
  }
  await client.end();
}

// the test runner also loads every compiled helper as a test file: do nothing without arguments
if (kind === 'redis') await redis();
else if (kind === 'postgres') await postgres();
