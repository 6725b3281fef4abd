/**
 * Throwaway Postgres and Redis servers (for the backend tests and `npm run bench` (its full run, or `-- --backends-only`)): real
 * servers, never mocks. Each starts on 127.0.0.1 with a free port and a mktemp data directory, and is
 * stopped (directory removed) by `stop()` or, at the latest, when the process exits.
 *
 * Missing binaries make `startPostgres`/`startRedis` return a reason instead of a server, so a local
 * test run without them skips those tests and says how to get them. With `CONVSEARCH_REQUIRE_SERVERS=1`
 * (set by `.ci/run`), a missing server is an error instead: CI never skips.
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const stoppers = new Set<() => void>();
process.on('exit', () => {
  for (const stop of stoppers) stop();
});

function run(
  cmd: string,
  args: string[],
  opts: { input?: string; asPostgres?: boolean; env?: NodeJS.ProcessEnv } = {},
): SpawnSyncReturns<string> {
  const [c, a] = opts.asPostgres && process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
  return spawnSync(c, a, { input: opts.input, encoding: 'utf8', env: opts.env ?? process.env, maxBuffer: 1 << 28 });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function must(r: SpawnSyncReturns<string>, what: string): string {
  if (r.error || r.status !== 0) throw new Error(`${what} failed: ${r.error?.message ?? r.stderr.trim() ?? ''}`);
  return r.stdout;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function onPath(cmd: string): boolean {
  return run('sh', ['-c', `command -v ${cmd}`]).status === 0;
}

/** The Postgres server binaries: `$PG_BIN`, `pg_config --bindir`, or Debian's newest `/usr/lib/postgresql/<v>/bin`. */
export function pgBinDir(): string | null {
  const candidates = [process.env.PG_BIN];
  const cfg = run('pg_config', ['--bindir']);
  if (cfg.status === 0) candidates.push(cfg.stdout.trim());
  try {
    const versions = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((v) => `/usr/lib/postgresql/${v}/bin`));
  } catch {
    // not Debian's layout
  }
  return candidates.find((d) => d && existsSync(join(d, 'initdb')) && existsSync(join(d, 'pg_ctl'))) ?? null;
}

const HOW = {
  postgres: 'install the PostgreSQL server (Debian: apt-get install postgresql) or set PG_BIN to its bin directory',
  redis: 'install redis-server (Debian: apt-get install redis-server)',
};

/** A reason to skip, or a failure under CONVSEARCH_REQUIRE_SERVERS. */
function unavailable(kind: 'postgres' | 'redis', why: string): string {
  const text = `${kind} tests skipped: ${why}; to run them, ${HOW[kind]}`;
  if (process.env.CONVSEARCH_REQUIRE_SERVERS === '1') throw new Error(text.replace('skipped', 'cannot run'));
  process.stderr.write(`# ${text}\n`);
  return text;
}

export interface PgServer {
  readonly port: number;
  readonly bin: string;
  /** `postgresql://user[:password]@127.0.0.1:port/db` plus `extra` query text. */
  url(db: string, user?: string, password?: string, extra?: string): string;
  psql(db: string, sql: string, user?: string): string;
  /** `pg_dump` of a database, for before/after comparisons. */
  dump(db: string): string;
  createDb(name: string, fixture?: string): void;
  stop(): void;
}

/** Superuser of the throwaway cluster (trust auth); `reader` logs in with a password (scram). */
export const PG_SUPERUSER = 'postgres';

export async function startPostgres(): Promise<PgServer | string> {
  const bin = pgBinDir();
  if (!bin) return unavailable('postgres', 'no PostgreSQL server binaries (initdb, pg_ctl) found');
  if (process.getuid?.() === 0 && run('id', ['postgres']).status !== 0)
    return unavailable('postgres', "running as root needs a 'postgres' OS user");
  const dir = mkdtempSync(join(tmpdir(), 'convsearch-pg-'));
  chmodSync(dir, 0o755);
  const data = join(dir, 'data');
  must(run('mkdir', ['-p', data]), 'mkdir');
  if (process.getuid?.() === 0) {
    const uid = Number(must(run('id', ['-u', 'postgres']), 'id').trim());
    const gid = Number(must(run('id', ['-g', 'postgres']), 'id').trim());
    chownSync(data, uid, gid);
  }
  // a throwaway cluster: initdb need not sync its files to disk (seconds on a busy disk), as the server runs fsync=off
  must(
    run(join(bin, 'initdb'), ['-D', data, '-U', PG_SUPERUSER, '--auth=trust', '--encoding=UTF8', '--locale=C.UTF-8', '--no-sync'], {
      asPostgres: true,
    }),
    'initdb',
  );
  // password logins for the least-privilege role; everyone else trusted (first matching line wins)
  const hba = join(data, 'pg_hba.conf');
  const rest = run('cat', [hba], { asPostgres: true }).stdout;
  const lines = 'host all reader 127.0.0.1/32 scram-sha-256\nhost all postgres 127.0.0.1/32 trust\nhost all all 127.0.0.1/32 trust\n';
  must(run('sh', ['-c', `cat > '${hba}'`], { input: lines + rest, asPostgres: true }), 'pg_hba');
  let port = 0;
  let started = false;
  for (let attempt = 0; attempt < 5 && !started; attempt++) {
    port = await freePort();
    const r = run(
      join(bin, 'pg_ctl'),
      ['-D', data, '-l', join(data, 'server.log'), '-w', '-o', `-p ${port} -k ${data} -c listen_addresses=127.0.0.1 -c fsync=off`, 'start'],
      { asPostgres: true },
    );
    started = r.status === 0;
  }
  if (!started) throw new Error(`postgres did not start: ${readFileSync(join(data, 'server.log'), 'utf8').slice(-2000)}`);
  let stopped = false;
  const stop = (): void => {
    if (stopped) return;
    stopped = true;
    stoppers.delete(stop);
    run(join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop'], { asPostgres: true });
    rmSync(dir, { recursive: true, force: true });
  };
  stoppers.add(stop);
  const conn = (db: string, user = PG_SUPERUSER): string[] => [
    '-X',
    '-q',
    '-v',
    'ON_ERROR_STOP=1',
    '-h',
    '127.0.0.1',
    '-p',
    String(port),
    '-U',
    user,
    '-d',
    db,
  ];
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of ['PGPASSWORD', 'PGSERVICE', 'PGPASSFILE', 'PGUSER', 'PGDATABASE', 'PGHOST', 'PGPORT']) delete env[k];
  return {
    port,
    bin,
    url: (db, user = PG_SUPERUSER, password, extra = '') =>
      `postgresql://${encodeURIComponent(user)}${password === undefined ? '' : `:${encodeURIComponent(password)}`}@127.0.0.1:${port}/${db}${extra}`,
    psql: (db, sql, user) => must(run(join(bin, 'psql'), [...conn(db, user), '-At', '-c', sql], { env }), `psql ${sql.slice(0, 60)}`),
    dump: (db) =>
      must(
        run(
          join(bin, 'pg_dump'),
          ['-h', '127.0.0.1', '-p', String(port), '-U', PG_SUPERUSER, '--no-owner', '--restrict-key=convsearchTest', db],
          { env },
        ),
        'pg_dump',
      ),
    createDb(name, fixture) {
      must(run(join(bin, 'createdb'), ['-h', '127.0.0.1', '-p', String(port), '-U', PG_SUPERUSER, name], { env }), 'createdb');
      if (fixture) must(run(join(bin, 'psql'), [...conn(name), '-f', fixture], { env }), `psql -f ${fixture}`);
    },
    stop,
  };
}

export interface RedisServer {
  readonly port: number;
  /** `redis://[user:password@]127.0.0.1:port/db` plus `extra` query text. */
  url(db: number, auth?: { user: string; password: string }, extra?: string): string;
  /**
   * Started with `{ tls: true }`: `rediss://localhost:port/db` (the same data over TLS, a certificate for
   * localhost that no one signed), and that certificate's file (for NODE_EXTRA_CA_CERTS).
   */
  readonly tls?: { url(db: number): string; readonly certificate: string };
  /** redis-cli as the default user; `input` is fed as commands. */
  cli(db: number, args: string[], input?: string): string;
  /** Every key of a db with its type, TTL and serialized value (DUMP), sorted: for before/after comparisons. */
  dump(db: number): string;
  load(db: number, fixture: string): void;
  stop(): void;
}

export async function startRedis(opts: { tls?: boolean } = {}): Promise<RedisServer | string> {
  if (!onPath('redis-server') || !onPath('redis-cli')) return unavailable('redis', 'redis-server or redis-cli not on PATH');
  if (opts.tls && !onPath('openssl')) return unavailable('redis', 'openssl (to make the TLS certificate) not on PATH');
  const dir = mkdtempSync(join(tmpdir(), 'convsearch-redis-'));
  const certificate = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  if (opts.tls)
    must(
      run('openssl', [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-keyout',
        key,
        '-out',
        certificate,
      ]),
      'openssl req',
    );
  let port = 0;
  let tlsPort = 0;
  let started = false;
  for (let attempt = 0; attempt < 5 && !started; attempt++) {
    port = await freePort();
    tlsPort = opts.tls ? await freePort() : 0;
    const tlsArgs = opts.tls
      ? ['--tls-port', String(tlsPort), '--tls-cert-file', certificate, '--tls-key-file', key, '--tls-auth-clients', 'no']
      : [];
    const r = run('redis-server', [
      ...tlsArgs,
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
      '--daemonize',
      'yes',
      '--pidfile',
      join(dir, 'redis.pid'),
      '--logfile',
      join(dir, 'redis.log'),
    ]);
    if (r.status !== 0) continue;
    for (let i = 0; i < 100 && !started; i++) {
      started = run('redis-cli', ['-p', String(port), 'ping']).stdout.trim() === 'PONG';
      if (!started) spawnSync('sleep', ['0.05']);
    }
  }
  if (!started)
    throw new Error(
      `redis-server did not start: ${existsSync(join(dir, 'redis.log')) ? readFileSync(join(dir, 'redis.log'), 'utf8').slice(-2000) : ''}`,
    );
  let stopped = false;
  const stop = (): void => {
    if (stopped) return;
    stopped = true;
    stoppers.delete(stop);
    // by its pid, not `redis-cli shutdown`: a test that set a password (requirepass, ACL) would get
    // NOAUTH there, and the server would outlive the run
    const pid = Number(readFileSync(join(dir, 'redis.pid'), 'utf8').trim());
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
    for (let i = 0; i < 100 && alive(pid); i++) spawnSync('sleep', ['0.02']);
    rmSync(dir, { recursive: true, force: true });
  };
  stoppers.add(stop);
  const cli = (db: number, args: string[], input?: string): string =>
    must(run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), '-n', String(db), ...args], { input }), `redis-cli ${args.join(' ')}`);
  return {
    port,
    url: (db, auth, extra = '') =>
      `redis://${auth ? `${encodeURIComponent(auth.user)}:${encodeURIComponent(auth.password)}@` : ''}127.0.0.1:${port}/${db}${extra}`,
    ...(opts.tls ? { tls: { url: (db: number) => `rediss://localhost:${tlsPort}/${db}`, certificate } } : {}),
    cli,
    dump(db) {
      const keys = cli(db, ['--scan']).split('\n').filter(Boolean).sort();
      // one redis-cli for all keys, three commands each; DUMP output is binary: --no-raw quotes every
      // reply losslessly on one line
      const arg = (k: string): string => `"${k.replace(/["\\]/g, '\\$&')}"`;
      const replies = cli(db, ['--no-raw'], keys.map((k) => `TYPE ${arg(k)}\nPTTL ${arg(k)}\nDUMP ${arg(k)}\n`).join(''))
        .split('\n')
        .filter(Boolean);
      if (replies.length !== 3 * keys.length) throw new Error(`redis dump: ${replies.length} replies for ${keys.length} keys`);
      return keys.map((k, i) => [k, ...replies.slice(3 * i, 3 * i + 3)].join('\t')).join('\n');
    },
    load(db, fixture) {
      const replies = cli(db, [], readFileSync(fixture, 'utf8'));
      const bad = replies.split('\n').filter((l) => l !== '' && !/^(OK|\d+)$/.test(l));
      if (bad.length) throw new Error(`loading ${fixture}: ${bad.slice(0, 3).join('; ')}`);
    },
    stop,
  };
}
