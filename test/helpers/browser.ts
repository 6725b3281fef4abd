/**
 * A real browser for the HTML report: Debian's headless chromium, every background service off, so
 * that any request it makes comes from the page. `beaconServer` records every request it receives.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p)) ?? null;

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--hide-scrollbars',
];

/**
 * Runs chromium on a page with `args` (`--dump-dom`, `--screenshot=…`) and a fresh profile; returns its
 * stdout. Asynchronous, so that a server in this process can answer the page meanwhile.
 */
export async function chromium(url: string, args: readonly string[]): Promise<string> {
  if (CHROMIUM === null) throw new Error('chromium is not installed');
  const profile = mkdtempSync(join(tmpdir(), 'convsearch-chromium-'));
  try {
    const child = spawn(CHROMIUM, [...FLAGS, `--user-data-dir=${profile}`, ...args, url], { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    const status = await new Promise<number | null>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', resolve);
    }).finally(() => clearTimeout(timer));
    if (status !== 0) throw new Error(`chromium exited ${status}: ${Buffer.concat(err).toString('utf8').slice(-2000)}`);
    return Buffer.concat(out).toString('utf8');
  } finally {
    rmSync(profile, { recursive: true, force: true });
  }
}

/** An HTTP server on 127.0.0.1 that answers everything and remembers each request's path. */
export async function beaconServer(): Promise<{ url: string; requests: string[]; close: () => Promise<void> }> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(req.url ?? '');
    res.end('');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    url: `http://127.0.0.1:${address.port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
