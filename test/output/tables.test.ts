import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Chalk } from 'chalk';
import type { RunSummary } from '../../src/api/listings.js';
import { layoutColumns, omittedNote, renderTable, runsTable, type Column, type RenderedTable } from '../../src/output/tables.js';
import { displayWidth } from '../../src/output/width.js';

const SGR = /\x1b\[[0-9;]*m/g;

/** The table as printed, without its last newline. */
const text = (t: RenderedTable): string => [...t.lines].join('\n');
const colours = [new Chalk({ level: 0 }), new Chalk({ level: 1 })];

function run(id: string, over: Partial<RunSummary['run']> = {}, summary: Partial<Omit<RunSummary, 'run'>> = {}): RunSummary {
  return {
    run: {
      runId: id,
      conversationId: 'conversation-with-a-long-name-0123456789',
      parentRunId: null,
      agentName: 'deploy-verifier',
      startedAt: '2025-03-01T09:00:00Z',
      rowid: 1,
      ...over,
    },
    snapshots: 3,
    interruptedSnapshots: 1,
    messages: 12,
    lastStep: 4,
    ...summary,
  };
}

const RUNS = [
  run('run-0123456789abcdef'),
  run('r2', { agentName: 'a very long agent name that goes on and on', parentRunId: 'run-0123456789abcdef', conversationId: null }),
  run('run-日本語', { agentName: '\x1b[31mred\x1b[0m agent' }),
];

/** Every check a terminal needs: no line past the width, no escape sequence cut, one row per line. */
function assertSound(text: string, width: number | null, coloured: boolean): string[] {
  const lines = text.split('\n');
  for (const l of lines) {
    const bare = l.replace(SGR, '');
    assert.ok(!bare.includes('\x1b'), `a cut escape sequence in ${JSON.stringify(l)}`);
    assert.ok(!/(?<!\\e)\[[0-9;]*m/.test(bare), `an escape fragment shows as text in ${JSON.stringify(l)}`);
    if (width !== null) assert.ok(displayWidth(l) <= width, `${JSON.stringify(bare)} is ${displayWidth(l)} columns, wider than ${width}`);
  }
  if (!coloured) assert.ok(!text.includes('\x1b'));
  assert.equal(new Set(lines.map((l) => displayWidth(l))).size, 1, 'every line of the grid has the same width');
  assert.equal(lines.length, RUNS.length + 4, 'one line per row: nothing wraps');
  return lines.map((l) => l.replace(SGR, ''));
}

describe('tables', () => {
  test('off a terminal: every column at full width, nothing left out', () => {
    for (const chalk of colours) {
      const t = runsTable(RUNS, { chalk, width: null });
      const lines = assertSound(text(t), null, chalk.level > 0);
      assert.deepEqual(t.omitted, []);
      assert.match(lines[1]!, /^│ run +│ conversation +│ agent +│ parent +│ started +│ snapshots +│ messages +│ last step │$/);
      assert.ok(lines.some((l) => l.includes('a very long agent name that goes on and on')));
      assert.ok(
        lines.some((l) => l.includes('\\e[31mred\\e[0m agent')),
        'store text is escaped, never raw',
      );
    }
  });

  for (const width of [40, 60, 80, 100, 120, 160]) {
    test(`at ${width} columns, colour on and off: fits, ids and timestamps whole, left-out columns named`, () => {
      for (const chalk of colours) {
        const t = runsTable(RUNS, { chalk, width });
        const lines = assertSound(text(t), width, chalk.level > 0);
        const headers = lines[1]!
          .split('│')
          .slice(1, -1)
          .map((h) => h.trim());
        assert.deepEqual([...headers, ...t.omitted].sort(), [
          'agent',
          'conversation',
          'last step',
          'messages',
          'parent',
          'run',
          'snapshots',
          'started',
        ]);
        assert.equal(headers[0], 'run', 'the run id is never left out');
        const body = lines.slice(3, -1).map((l) =>
          l
            .split('│')
            .slice(1, -1)
            .map((c) => c.trim()),
        );
        assert.deepEqual(
          body.map((r) => r[0]),
          ['run-0123456789abcdef', 'r2', 'run-日本語'],
          'ids whole',
        );
        const at = (h: string): number => headers.indexOf(h);
        if (at('started') >= 0)
          assert.ok(
            body.every((r) => r[at('started')] === '2025-03-01 09:00:00Z'),
            'timestamps whole',
          );
        if (at('conversation') >= 0) assert.equal(body[0]![at('conversation')], 'conversation-with-a-long-name-0123456789');
        if (at('agent') >= 0 && body[1]![at('agent')] !== 'a very long agent name that goes on and on')
          assert.match(body[1]![at('agent')]!, /^a very.*…$/, 'free text shortened with …');
        // the more important columns stay longer: when a column shows, every more important one does too
        const order = ['started', 'messages', 'conversation', 'snapshots', 'agent', 'parent', 'last step'];
        const shown = order.map((h) => headers.includes(h));
        assert.deepEqual(
          shown,
          shown.slice().sort((a, b) => Number(b) - Number(a)),
          `drop order at ${width}: ${headers.join(', ')}`,
        );
      }
    });
  }

  test('at 80 columns the runs table keeps run, started and messages and names what it left out', () => {
    const t = runsTable(RUNS, { chalk: colours[0]!, width: 80 });
    assert.ok(t.omitted.length > 0);
    assert.equal(omittedNote(t.omitted, 80), `left out to fit 80 columns: ${t.omitted.join(', ')} (--wide or --json shows them)`);
    assert.equal(omittedNote([], 80), null);
  });

  test('a terminal too narrow for the required columns shortens them as the last resort', () => {
    const t = runsTable([run('run-'.padEnd(50, 'x'))], { chalk: colours[1]!, width: 30 });
    for (const l of text(t).split('\n')) assert.ok(displayWidth(l) <= 30, l);
    assert.match(text(t).replace(SGR, ''), /│ run-x+… │/);
  });

  test('layout: text gives way before anything is left out; numbers align right', () => {
    const cols: Column[] = [
      { header: 'id', kind: 'id' },
      { header: 'note', kind: 'text', drop: 2 },
      { header: 'n', kind: 'number', drop: 1 },
    ];
    // natural: id 10, note 30, n 3 -> 43 + 10 of chrome
    assert.deepEqual(layoutColumns(cols, [10, 30, 3], 53), { visible: [0, 1, 2], widths: [10, 30, 3] });
    assert.deepEqual(layoutColumns(cols, [10, 30, 3], 40), { visible: [0, 1, 2], widths: [10, 17, 3] });
    assert.deepEqual(layoutColumns(cols, [10, 30, 3], 27), { visible: [0, 2], widths: [10, 3] }, 'note below 6 columns goes');
    assert.deepEqual(layoutColumns(cols, [10, 30, 3], null), { visible: [0, 1, 2], widths: [10, 30, 3] });
    const t = renderTable(
      cols,
      [
        [{ text: 'a' }, { text: 'x' }, { text: '7' }],
        [{ text: 'b' }, { text: 'y' }, { text: '123' }],
      ],
      { chalk: colours[0]!, width: null },
    );
    assert.deepEqual(text(t).split('\n').slice(3, 5), ['│ a  │ x    │   7 │', '│ b  │ y    │ 123 │']);
  });

  test('rendering is one pass over the rows: 20,000 runs render whole', () => {
    const many = Array.from({ length: 20_000 }, (_, i) => run(`run-${i}`));
    const t = runsTable(many, { chalk: colours[1]!, width: 100 });
    assert.equal(text(t).split('\n').length, 20_004);
  });
});
