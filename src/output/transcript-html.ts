import type { ShowView } from '../api/show.js';
import type { StoreRun } from '../store/reader.js';
import { anchorId, escapeHtml } from './html.js';
import { runIdName } from './run-name.js';

/** `decoded <agent>/<inner id>` for a derived run id (docs/backends.md); null for any other. */
export function decodedHtml(run: StoreRun): string | null {
  const n = runIdName(run);
  return n === null ? null : `decoded ${escapeHtml(n.agent)}/${escapeHtml(n.innerRunId)}`;
}

/** The section id of a run's transcript, and of one of its messages: what a hit links to. */
export function transcriptAnchor(runId: string, position?: number): string {
  return anchorId('run-', runId) + (position === undefined ? '' : `-m${position}`);
}

/**
 * A run's replayed record as an HTML section: one block per message, numbered as search excerpts
 * number them, each part with its role label. Every piece of store text goes through escapeHtml.
 */
export function transcriptHtml(view: ShowView, marked: ReadonlySet<number> = new Set()): string {
  const s = view.summary.run;
  const meta = [
    s.store !== undefined ? `store ${escapeHtml(s.store)}` : null,
    decodedHtml(s),
    s.conversationId !== null ? `conversation ${escapeHtml(s.conversationId)}` : 'no conversation',
    s.agentName !== null ? `agent ${escapeHtml(s.agentName)}` : null,
    `started ${escapeHtml(s.startedAt)}`,
    `${view.length} message${view.length === 1 ? '' : 's'}`,
  ].filter((x) => x !== null);
  const messages = view.messages.map((m) => {
    const parts = m.parts
      .map((p) => `<div class="part role-${p.role}"><span class="label">${escapeHtml(p.label)}</span>${escapeHtml(p.text)}</div>`)
      .join('');
    const time = m.timestamp !== null ? `<span class="time">${escapeHtml(m.timestamp)}</span>` : '';
    const cls = marked.has(m.position) ? 'msg matched' : 'msg';
    return `<li class="${cls}" id="${transcriptAnchor(s.runId, m.position)}"><span class="pos">[${m.position}]</span> <span class="kind">${m.kind}</span>${time}${parts}</li>`;
  });
  return `<section class="transcript" id="${transcriptAnchor(s.runId)}"><h3>Run ${escapeHtml(s.runId)}</h3><p class="meta">${meta.join(' · ')}</p><ol class="messages">${messages.join('')}</ol></section>`;
}
