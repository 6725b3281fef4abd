/**
 * `tools` (issue 12 §4): every figure agrees with a search that filters on the tool (calls are the
 * messages a `--role tool-call --tool <name>` search counts, runs those of its --count-by run, first and
 * last seen its hits' times), with the scopes, --agent, --since/--until and --collapse, on the index
 * and without it.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { cli, ROOT } from '../helpers/cli.js';
import { isoMicros } from '../../src/history/time.js';
import { parseInstant } from '../../src/history/timestamps.js';
import { buildCompactionStore } from '../helpers/compaction-store.js';
import { checkEvents, checkShape, TOOLS_DOC, TOOLS_EVENTS } from '../helpers/shapes.js';
import { buildUxStore } from '../helpers/ux-store.js';

const DEMO = join(ROOT, 'examples', 'sessions.db');
let compaction: string;
let ux: string;
before(() => {
  compaction = buildCompactionStore();
  ux = buildUxStore();
});

interface Tool {
  tool_name: string;
  calls: number;
  returns: number;
  retries: number;
  runs: number;
  first_seen: string | null;
  last_seen: string | null;
}

async function both(args: string[]): Promise<string> {
  const a = await cli(args);
  const b = await cli([...args, '--no-index']);
  assert.equal(a.status, 0, a.stderr);
  assert.equal(b.stdout, a.stdout, args.join(' '));
  return a.stdout;
}
const tools = async (db: string, args: string[]): Promise<Tool[]> => {
  const doc = JSON.parse(await both(['tools', '--db', db, ...args, '--json']));
  checkShape(doc, TOOLS_DOC);
  return (doc as { tools: Tool[] }).tools;
};

interface HitDoc {
  run_id: string;
  text: string;
  timestamp: string | null;
  parts: Array<{ role: string; tool_name: string | null }>;
}

/**
 * What one search says, under the same scope and filters: every message with a tool part holds its
 * tool's name as a token (`Tool Call [run_shell]: …`), so searching for the names with -C 0 lists them all.
 */
async function fromSearch(db: string, names: string[], scope: string[], filters: string[], collapse: boolean): Promise<Tool[]> {
  const args = [
    'search',
    ...names,
    '--db',
    db,
    ...scope,
    ...filters,
    '--role',
    'tool-call,tool-return,retry',
    '-C',
    '0',
    '-m',
    '100000',
    '--json',
  ];
  const hits = (JSON.parse((await cli(args)).stdout) as { hits: HitDoc[] }).hits;
  const seen = new Set<string>();
  const out = new Map<string, Tool & { runIds: Set<string> }>();
  for (const h of hits) {
    if (collapse) {
      if (seen.has(`${h.run_id}\0${h.text}`)) continue;
      seen.add(`${h.run_id}\0${h.text}`);
    }
    for (const p of h.parts) {
      if (p.tool_name === null || !['tool-call', 'tool-return', 'retry'].includes(p.role)) continue;
      let t = out.get(p.tool_name);
      if (!t)
        out.set(
          p.tool_name,
          (t = { tool_name: p.tool_name, calls: 0, returns: 0, retries: 0, runs: 0, first_seen: null, last_seen: null, runIds: new Set() }),
        );
      if (p.role === 'tool-call') t.calls++;
      else if (p.role === 'tool-return') t.returns++;
      else t.retries++;
      t.runIds.add(h.run_id);
      const at = isoMicros(parseInstant(h.timestamp!)!);
      if (!collapse) {
        if (t.first_seen === null || at < t.first_seen) t.first_seen = at;
        if (t.last_seen === null || at > t.last_seen) t.last_seen = at;
      }
    }
  }
  return [...out.values()].map(({ runIds, ...t }) => ({ ...t, runs: runIds.size })).sort((a, b) => (a.tool_name < b.tool_name ? -1 : 1));
}

describe('tools', () => {
  const cases: Array<[string, string[], string[]]> = [
    ['demo', [], []],
    ['demo', ['--conversation', 'conv-ops-billing-api'], []],
    ['demo', ['--run', 'run-ops-2'], []],
    ['demo', [], ['--agent', 'deploy-*']],
    ['demo', [], ['--since', '2026-01-12T10:00Z', '--until', '2026-01-12T12:00Z']],
    ['ux', [], []],
    ['compaction', [], []],
    ['compaction', ['--conversation', 'conv-lx'], ['--since', '2026-02-03T08:00:20Z']],
  ];
  for (const [store, scope, filters] of cases) {
    for (const collapse of [false, true]) {
      test(`agrees with a search: ${store} ${[...scope, ...filters].join(' ')}${collapse ? ' --collapse' : ''}`, async () => {
        const db = store === 'demo' ? DEMO : store === 'ux' ? ux : compaction;
        const listed = await tools(db, [...scope, ...filters, ...(collapse ? ['--collapse'] : [])]);
        assert.ok(listed.length > 0);
        assert.deepEqual(
          listed.map((t) => t.tool_name),
          listed.map((t) => t.tool_name).sort(),
          'by name',
        );
        const want = await fromSearch(
          db,
          listed.map((t) => t.tool_name),
          scope.length ? scope : ['--scope', 'all'],
          filters,
          collapse,
        );
        assert.deepEqual(collapse ? listed.map((t) => ({ ...t, first_seen: null, last_seen: null })) : listed, want);
      });
    }
  }

  test('--collapse counts the copies compaction left once', async () => {
    const plain = await tools(DEMO, ['--run', 'run-cache-1']);
    const folded = await tools(DEMO, ['--run', 'run-cache-1', '--collapse']);
    const shell = (ts: Tool[]) => ts.find((t) => t.tool_name === 'run_shell')!;
    assert.deepEqual([shell(plain).calls, shell(folded).calls], [5, 3]);
  });

  test('the table, NDJSON, and ids the store does not hold', async () => {
    const table = await both(['tools', '--db', DEMO, '--color', 'never']);
    assert.match(table, /^┌.*\n│ tool +│ calls │ returns │ retries │ runs │ first seen +│ last seen +│\n/);
    assert.match(table, /│ run_shell +│ +\d+ │ +\d+ │ +0 │ +\d+ │ 2026-01-12 \d\d:\d\d:\d\dZ │ 2026-01-12 \d\d:\d\d:\d\dZ │/);
    const events = checkEvents(
      await both(['tools', '--db', DEMO, '--ndjson', '--agent', 'deploy-*', '--since', '2026-01-12']),
      TOOLS_EVENTS,
    );
    assert.deepEqual(events[0]!.data, {
      filters: { conversation_id: null, run_id: null, agents: ['deploy-*'], since: '2026-01-12T00:00:00.000000Z', until: null },
      collapse: false,
    });
    assert.equal(events[events.length - 1]!.data.tools, events.length - 2);
    for (const args of [
      ['--run', 'run-pay-9'],
      ['--conversation', 'conv-pay'],
    ]) {
      const r = await cli(['tools', '--db', DEMO, ...args]);
      assert.equal(r.status, 2);
      assert.match(r.stderr, /^convsearch: error: no (run|conversation) '(run-pay-9|conv-pay)'.*did you mean/);
    }
  });
});
