import { readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** What a `.pgpass` line is matched against (libpq's rules). */
export interface PgpassQuery {
  readonly host: string;
  readonly port: string;
  readonly database: string;
  readonly user: string;
}

/** Splits a `.pgpass` line at unescaped colons, undoing `\:` and `\\`. */
function fields(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === '\\' && i + 1 < line.length) cur += line[++i];
    else if (c === ':') {
      out.push(cur);
      cur = '';
    } else cur += c;
  }
  out.push(cur);
  return out;
}

/**
 * The variables libpq reads that the driver honours, taken on the main thread when a store is opened:
 * a driver thread lives on from one store to the next, and its own copy of the environment would be
 * the one of its start.
 */
export function libpqEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string | undefined> {
  const { PGPASSWORD, PGPASSFILE, PGSSLMODE, PGSSLROOTCERT, HOME } = env;
  return { PGPASSWORD, PGPASSFILE, PGSSLMODE, PGSSLROOTCERT, HOME };
}

/**
 * The password `.pgpass` holds for a connection, as libpq reads it: `$PGPASSFILE` or `~/.pgpass`,
 * ignored when group or others may read it, first matching `host:port:database:user:password` line
 * (`*` matches anything; a socket directory counts as `localhost`).
 */
export function pgpassLookup(q: PgpassQuery, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const file = env.PGPASSFILE || join(env.HOME || homedir(), '.pgpass');
  let text: string;
  try {
    if ((statSync(file).mode & 0o077) !== 0) return undefined;
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  const host = q.host.startsWith('/') ? 'localhost' : q.host;
  const want = [host, q.port, q.database, q.user];
  for (const line of text.split(/\r?\n/)) {
    if (line === '' || line.startsWith('#')) continue;
    const f = fields(line);
    if (f.length < 5) continue;
    if (want.every((w, i) => f[i] === '*' || f[i] === w)) return f.slice(4).join(':');
  }
  return undefined;
}
