import type { ShowView } from '../api/show.js';
import { formatScore1f } from '../py/repr.js';
import type { Hit, SearchOutcome } from '../search/search.js';
import { queryTokens, tokenPattern } from '../text/tokenize.js';
import { escapeHtml } from './html.js';
import { outcomeStats } from './stats.js';
import { type Timeline, timeline, type TimelineBucket } from './timeline.js';
import { decodedHtml, transcriptAnchor, transcriptHtml } from './transcript-html.js';

/** What the report is made of: the search, and the replayed record of each run a hit is in. */
export interface ReportInput {
  readonly outcome: SearchOutcome;
  /** Keyed by the hit's run id. */
  readonly transcripts: ReadonlyMap<string, ShowView>;
  /** Shown in the header: the store(s) searched. */
  readonly stores: readonly string[];
  /** When the report was made (ISO text); left out of the page when absent, so that output can be byte-stable. */
  readonly generatedAt?: string;
}

/**
 * Nothing is loaded or run: no script, style or image source besides the inline style sheet, which
 * the CSP pins by hash, and the inline SVG. The CSP meta tag comes before any store text.
 */
const STYLE = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1f2328;background:#f6f8fa}
header,main{max-width:1040px;margin:0 auto;padding:0 24px}
header{padding-top:20px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 10px}h3{font-size:15px;margin:0 0 2px;word-break:break-all}
.sub{color:#59636e;margin:0 0 10px}.query{font-family:ui-monospace,Menlo,Consolas,monospace;background:#fff;border:1px solid #d1d9e0;border-radius:4px;padding:1px 6px}
.stats{display:flex;gap:12px;flex-wrap:wrap;margin:12px 0}.stat{background:#fff;border:1px solid #d1d9e0;border-radius:6px;padding:8px 14px}
.stat b{display:block;font-size:20px}.stat span{color:#59636e;font-size:12px}
.card{background:#fff;border:1px solid #d1d9e0;border-radius:6px;padding:12px 16px;margin:0 0 12px}
.charts{display:grid;grid-template-columns:1fr 1fr;gap:12px}.charts .card{margin:0}.charts h3{margin-bottom:6px}
svg text{font:11px system-ui,sans-serif;fill:#59636e}
.hit h3 a{color:#0969da;text-decoration:none}.hit .meta,.transcript .meta{color:#59636e;font-size:12px;margin:2px 0 8px;word-break:break-all}
.rank{display:inline-block;min-width:26px;font-weight:600;color:#59636e}.score{float:right;font-family:ui-monospace,monospace;color:#1a7f37}
pre{margin:0;white-space:pre-wrap;word-break:break-word;font:12.5px/1.5 ui-monospace,Menlo,Consolas,monospace}
.line{display:block;color:#59636e;padding:1px 6px}.line.hit-line{color:#1f2328;background:#fff8c5;border-left:3px solid #d4a72c}
mark{background:#ffd33d;color:inherit;border-radius:2px;padding:0 1px}
.messages{list-style:none;padding:0;margin:0}.msg{border-top:1px solid #eef1f4;padding:6px 0;white-space:pre-wrap;word-break:break-word;font:12.5px/1.5 ui-monospace,Menlo,monospace}
.msg.matched{background:#fff8c5}.msg:target{outline:2px solid #0969da}.pos{color:#59636e}.kind{color:#8250df;font-size:11px}.time{color:#59636e;font-size:11px;margin-left:8px}
.transcript{background:#fff;border:1px solid #d1d9e0;border-radius:6px;padding:12px 16px;margin:0 0 12px}
.part{margin:2px 0 0 12px}.label{color:#0550ae;font-weight:600}
.empty{color:#59636e;font-style:italic}footer{max-width:1040px;margin:24px auto;padding:0 24px;color:#59636e;font-size:12px}
`;

/**
 * `createHash('sha256').update(STYLE).digest('base64')`, written out so that loading this module (every
 * command does) hashes nothing; test/output/report-html.test.ts recomputes it from the page.
 */
const STYLE_HASH = 'Ptgr7xdbF2cSqCqLgX1H8w8YnKHxXqRvwXWFbZl8M+k=';

/** `default-src 'none'`: nothing may be fetched, framed, submitted or run; the one style sheet by its hash. */
export const REPORT_CSP = `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; img-src 'none'; script-src 'none'; base-uri 'none'; form-action 'none'`;

/** Escapes `text` and marks each token that is a query term. */
export function markTerms(text: string, terms: ReadonlySet<string>): string {
  let out = '';
  let last = 0;
  for (const m of text.matchAll(tokenPattern())) {
    if (!terms.has(m[0].toLowerCase())) continue;
    out += escapeHtml(text.slice(last, m.index)) + `<mark>${escapeHtml(m[0])}</mark>`;
    last = m.index + m[0].length;
  }
  return out + escapeHtml(text.slice(last));
}

function hitHtml(hit: Hit, terms: ReadonlySet<string>, linked: boolean): string {
  const r = hit.run;
  const target = transcriptAnchor(r.runId, hit.position);
  const title = `${escapeHtml(r.runId)}:${hit.position}`;
  const meta = [
    r.store !== undefined ? `store ${escapeHtml(r.store)}` : null,
    decodedHtml(r),
    r.conversationId !== null ? `conversation ${escapeHtml(r.conversationId)}` : null,
    hit.conversation ? `title ${escapeHtml(hit.conversation.title)} (${escapeHtml(hit.conversation.outcome)})` : null,
    r.agentName !== null ? `agent ${escapeHtml(r.agentName)}` : null,
    hit.timestamp !== null ? escapeHtml(hit.timestamp) : `run started ${escapeHtml(r.startedAt)}`,
  ].filter((x) => x !== null);
  const lines = hit.excerpt
    .map((l) => `<span class="line${l.hit ? ' hit-line' : ''}">[${l.position}] ${markTerms(l.text, terms)}</span>`)
    .join('');
  return `<article class="card hit"><h3><span class="rank">#${hit.rank}</span>${linked ? `<a href="#${target}">${title}</a>` : title}<span class="score">${formatScore1f(hit.score)}</span></h3><p class="meta">${meta.join(' · ')}</p><pre>${lines}</pre></article>`;
}

/** A bar chart of the buckets as inline SVG, labelled at both ends, each bar titled with its key and count. */
export function barsSvg(buckets: readonly TimelineBucket[], label: string): string {
  const w = 480;
  const h = 120;
  const base = h - 20;
  if (buckets.length === 0) return `<p class="empty">No matches to chart.</p>`;
  const top = Math.max(1, ...buckets.map((b) => b.count));
  const step = w / buckets.length;
  const bar = Math.min(48, Math.max(1, step * 0.8)); // one day must not fill the chart as one slab
  const rects = buckets.map((b, i) => {
    const bh = b.count === 0 ? 0 : Math.max(2, (b.count / top) * (base - 14));
    return `<rect x="${(i * step + (step - bar) / 2).toFixed(1)}" y="${(base - bh).toFixed(1)}" width="${bar.toFixed(1)}" height="${bh.toFixed(1)}" fill="#54aeff"><title>${escapeHtml(b.key)}: ${b.count}</title></rect>`;
  });
  const first = escapeHtml(buckets[0]!.key);
  const last = escapeHtml(buckets[buckets.length - 1]!.key);
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${w} ${h}" width="100%" role="img" aria-label="${escapeHtml(label)}"><line x1="0" y1="${base}" x2="${w}" y2="${base}" stroke="#d1d9e0"/>${rects.join('')}<text x="0" y="${h - 4}">${first.length > 40 ? first.slice(0, 40) + '…' : first}</text><text x="${w}" y="${h - 4}" text-anchor="end">${buckets.length > 1 ? (last.length > 40 ? last.slice(0, 40) + '…' : last) : ''}</text><text x="0" y="10">max ${top}</text></svg>`;
}

function chartCard(t: Timeline, title: string): string {
  return `<div class="card"><h3>${title}</h3>${barsSvg(t.buckets, title)}</div>`;
}

/**
 * The whole report page: header with the query and counts, the timeline pictures (matches per day and
 * per run), the ranked hits with their match windows marked, each linking to its run's transcript below.
 */
export function reportHtml(input: ReportInput): string {
  const { outcome } = input;
  const stats = outcomeStats(outcome);
  const terms = new Set(queryTokens(outcome.options.query));
  const hits = outcome.kind === 'found' ? outcome.hits : [];
  const byDay = timeline(outcome, 'day');
  const byRun = timeline(outcome, 'run');
  const query = escapeHtml(outcome.options.query);
  const scope =
    outcome.options.runId !== null
      ? `run ${escapeHtml(outcome.options.runId)}`
      : outcome.options.scope === 'conversation'
        ? `conversation ${escapeHtml(outcome.options.conversationId ?? '')}`
        : 'every run';
  const stat = (n: string | number, what: string): string => `<div class="stat"><b>${n}</b><span>${what}</span></div>`;
  const range = byDay.from === null ? '' : byDay.from === byDay.to ? byDay.from : `${byDay.from} – ${byDay.to}`;
  const hitCards = hits.map((h) => hitHtml(h, terms, input.transcripts.has(h.run.runId))).join('');
  const marked = new Map<string, Set<number>>();
  for (const h of hits) {
    const set = marked.get(h.run.runId) ?? new Set<number>();
    set.add(h.position);
    marked.set(h.run.runId, set);
  }
  const transcripts = [...input.transcripts].map(([runId, view]) => transcriptHtml(view, marked.get(runId))).join('');
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${REPORT_CSP}">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>convsearch report: ${query}</title>
<style>${STYLE}</style></head>
<body><header><h1>convsearch report</h1>
<p class="sub">Query <span class="query">${query}</span> over ${scope} in ${input.stores.map(escapeHtml).join(', ')}${input.generatedAt !== undefined ? ` · made ${escapeHtml(input.generatedAt)}` : ''}</p>
<div class="stats">${stat(stats.hits, 'hits shown')}${stat(stats.matches, 'matching messages')}${stat(stats.matchingRuns, 'runs with matches')}${stat(outcome.runCount, 'runs searched')}${range ? stat(range, 'days with matches') : ''}</div></header>
<main><h2>Timeline</h2><div class="charts">${chartCard(byDay, 'Matches per day (by run start)')}${chartCard(byRun, 'Matches per run')}</div>
<h2>Hits</h2>${hitCards || '<p class="empty">No hit.</p>'}
<h2>Transcripts</h2>${transcripts || '<p class="empty">No transcript.</p>'}</main>
<footer>Made by convsearch from a read-only store. Store text is shown as text: nothing in this page loads or runs anything.</footer>
</body></html>
`;
}
