import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { escapeHtml, hitTranscripts, reportHtml, withSession } from '../../src/lib.js';
import { beaconServer, CHROMIUM, chromium } from '../helpers/browser.js';
import { cli, FIXTURES } from '../helpers/cli.js';
import { storeDigest } from '../helpers/hardening.js';
import { buildHtmlHostileStore, htmlAttacks } from '../helpers/html-store.js';

const dir = mkdtempSync(join(tmpdir(), 'convsearch-report-'));
const requireBrowser = process.env.CONVSEARCH_REQUIRE_SERVERS === '1';
const noBrowser = CHROMIUM === null && !requireBrowser ? 'chromium is not installed' : false;

let beacon: Awaited<ReturnType<typeof beaconServer>>;
let store: string;
before(async () => {
  beacon = await beaconServer();
  store = buildHtmlHostileStore(beacon.url, join(dir, 'html.db'));
});
after(() => {
  beacon.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Hits as `search --json` counts them, for the same query and limit. */
async function jsonHits(args: string[]): Promise<number> {
  const r = await cli(['search', ...args, '--json']);
  return (JSON.parse(r.stdout) as { hits: unknown[] }).hits.length;
}

const hitCount = (dom: string): number => dom.match(/<article class="card hit">/g)?.length ?? 0;

test('report of the hostile-text store: every attack is text in the file, and the store is left as it was', async () => {
  const before = storeDigest(store);
  const out = join(dir, 'hostile.html');
  const r = await cli(['report', 'refund', '--db', store, '-o', out, '--no-index']);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /wrote .*hostile\.html: 3 hits, \d+ matching messages/);
  const html = readFileSync(out, 'utf8');
  for (const attack of htmlAttacks(beacon.url)) {
    assert.ok(!html.includes(attack), `raw attack in the page: ${attack}`);
    assert.ok(html.includes(escapeHtml(attack)), `attack not shown as text: ${attack}`);
  }
  // the only markup with a URL in it is the SVG namespace
  assert.deepEqual([...new Set(html.match(/<(script|img|iframe|link|object|embed|base|form)\b/g) ?? [])], []);
  const csp = html.match(/<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'sha256-([A-Za-z0-9+/=]+)'/);
  assert.ok(csp, 'no CSP meta tag');
  // the pinned hash is the page's one style sheet's (the hash is written out in the source)
  const styles = [...html.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => m[1]!);
  assert.equal(styles.length, 1);
  assert.equal(createHash('sha256').update(styles[0]!).digest('base64'), csp[1]);
  assert.deepEqual(storeDigest(store), before);
});

test('report in chromium: as many hits as search shows, no request made, no script run, links land on transcript messages', {
  skip: noBrowser,
}, async () => {
  const out = join(dir, 'browser.html');
  const args = ['refund', '--db', store, '--scope', 'all', '-m', '20', '--no-index'];
  assert.equal((await cli(['report', ...args, '-o', out])).status, 0);
  const dom = await chromium(pathToFileURL(out).href, ['--dump-dom', '--virtual-time-budget=3000']);
  assert.equal(hitCount(dom), await jsonHits(args));
  assert.ok(hitCount(dom) >= 3);
  assert.match(dom, /<title>convsearch report: refund<\/title>/, 'a stored script retitled the page');
  assert.ok(!/pwned/.test(dom.match(/<title>[^<]*<\/title>/)![0]));
  assert.deepEqual(beacon.requests, [], 'the page made requests');
  // every hit link names a message id present in the page
  const ids = new Set([...dom.matchAll(/ id="([^"]+)"/g)].map((m) => m[1]));
  const links = [...dom.matchAll(/<a href="#([^"]+)">/g)].map((m) => m[1]!);
  assert.equal(links.length, hitCount(dom));
  for (const l of links) assert.ok(ids.has(l), `dangling link #${l}`);
});

test('the browser check can fail: the same attacks unescaped and without the CSP do make requests and run scripts', {
  skip: noBrowser,
}, async () => {
  const page = join(dir, 'control.html');
  // the image, script and SVG attacks (the meta refresh would navigate away from the DOM dumped)
  const attacks = htmlAttacks(beacon.url).slice(0, 3).join('');
  writeFileSync(page, `<!DOCTYPE html><html><head><title>control</title></head><body>${attacks}</body></html>`);
  try {
    const dom = await chromium(pathToFileURL(page).href, ['--dump-dom', '--virtual-time-budget=3000']);
    assert.ok(beacon.requests.length > 0, 'the control page reached the beacon');
    assert.match(dom, /<title>pwned-/);
  } finally {
    beacon.requests.length = 0;
  }
});

test('report screenshot: chromium renders the page to a PNG', { skip: noBrowser }, async () => {
  const out = join(dir, 'shot.html');
  assert.equal((await cli(['report', 'refund', '--db', store, '-o', out, '--no-index'])).status, 0);
  const png = join(dir, 'shot.png');
  await chromium(pathToFileURL(out).href, [`--screenshot=${png}`, '--window-size=1100,1400']);
  const bytes = readFileSync(png);
  assert.deepEqual([...bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  assert.ok(bytes.length > 20_000, 'an image with something in it');
  assert.deepEqual(beacon.requests, []);
});

test('report of a parity store from the library: one section per hit run, each hit linked, as the CLI writes it', async () => {
  const db = join(FIXTURES, 'parity', 'small.db');
  const html = await withSession(db, { index: false }, (session) => {
    const outcome = session.search({ query: 'billing schema', scope: 'all', maxMatches: 20 });
    const transcripts = hitTranscripts(session, outcome);
    assert.equal(outcome.kind, 'found');
    if (outcome.kind !== 'found') return '';
    assert.equal(transcripts.size, new Set(outcome.hits.map((h) => h.run.runId)).size);
    return reportHtml({ outcome, transcripts, stores: [db] });
  });
  const cliOut = join(dir, 'small.html');
  const r = await cli(['report', 'billing', 'schema', '--db', db, '-o', '-', '--no-index']);
  assert.equal(r.status, 0, r.stderr);
  // the same page but for the time it was made
  assert.equal(r.stdout.replace(/ · made [^<]*/, ''), html);
  assert.ok(!existsSync(cliOut));
  assert.equal(hitCount(html), (html.match(/<a href="#run-/g) ?? []).length);
});

test('report: bad input is one line and status 2', async () => {
  const noOut = await cli(['report', 'refund', '--db', store]);
  assert.equal(noOut.status, 2);
  assert.match(noOut.stderr, /^convsearch: error: report needs -o <file>/);
  const badDir = await cli(['report', 'refund', '--db', store, '-o', join(dir, 'no', 'such', 'dir.html'), '--no-index']);
  assert.equal(badDir.status, 2);
  assert.equal(badDir.stderr.trim().split('\n').length, 1, badDir.stderr);
  assert.match(badDir.stderr, /cannot write .*ENOENT/);
  const none = await cli(['report', 'zzzqqq', '--db', store, '-o', join(dir, 'none.html'), '--no-index']);
  assert.equal(none.status, 1);
  assert.ok(readFileSync(join(dir, 'none.html'), 'utf8').includes('No hit.'));
});

test('report -o never writes over a store, a link to it or one of its side files: refused, the store byte-identical', async () => {
  const before = storeDigest(store);
  const link = join(dir, 'link-to-store.db');
  symlinkSync(store, link);
  for (const out of [store, link, `${store}-wal`]) {
    const r = await cli(['report', 'refund', '--db', store, '-o', out, '--no-index']);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /^convsearch: error: refusing to write .*: it is the store /);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
  assert.deepEqual(storeDigest(store), before);
  assert.ok(!existsSync(`${store}-wal`));
});
