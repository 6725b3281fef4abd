/**
 * A run's replayed record as a Markdown transcript for people: a heading per message (position,
 * request/response, timestamp), a role heading per part (User, Assistant, Tool call with its
 * arguments, Tool return, Retry, Thinking marked as the model's reasoning, …), media noted by type and
 * size (never their bytes). Store text is first redacted, then escaped for a terminal (controls become
 * visible, `\e[2J` and the like never act); ids in headings are escaped as single-line fields.
 */
import type { ExportedMessage, ExportedRun } from '../api/export.js';
import { isArray, isObject, type JsonObject, type JsonValue } from '../py/json-value.js';
import { pyJsonDumps } from '../py/repr.js';
import { argsAsDict } from '../render/message.js';
import { escapeForTerminal, escapeInline } from './escape.js';
import type { Redactor } from './redact.js';

/** Store text to Markdown-ready text: `body` keeps newlines, `inline` is one line. */
interface Clean {
  body(text: string): string;
  inline(text: string): string;
}

function cleaner(redactor: Redactor | undefined): Clean {
  const r = (s: string): string => (redactor ? redactor.text(s) : s);
  return { body: (s) => escapeForTerminal(r(s)), inline: (s) => escapeInline(r(s)) };
}

const str = (v: JsonValue | undefined): string => (v === undefined || v === null ? '' : typeof v === 'string' ? v : pyJsonDumps(v));

/** A fenced block whose fence is longer than any backtick run inside. */
function fenced(text: string, lang = ''): string {
  const longest = Math.max(2, ...(text.match(/`+/g) ?? []).map((s) => s.length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}${lang}\n${text}\n${fence}`;
}

/** An inline code span that holds any text (CommonMark: a longer backtick fence, spaces when it starts or ends with one). */
function code(text: string): string {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((s) => s.length));
  const fence = '`'.repeat(longest + 1);
  const pad = text.startsWith('`') || text.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${text}${pad}${fence}`;
}

/** Bytes encoded by base64 text (standard or URL-safe). */
function base64Bytes(b64: string): number {
  const s = b64.replace(/\s/g, '');
  const pad = s.endsWith('==') ? 2 : s.endsWith('=') ? 1 : 0;
  return Math.floor(((s.length - pad) * 6) / 8);
}

/** A media item as a note: its kind, media type, and size, URL or file id. */
function mediaNote(item: JsonObject, c: Clean): string {
  const data = item.get('data');
  const url = item.get('url');
  const fileId = item.get('file_id');
  const what = [
    c.inline(str(item.get('media_type'))),
    typeof data === 'string' ? `${base64Bytes(data)} bytes` : '',
    typeof url === 'string' ? c.inline(url) : '',
    typeof fileId === 'string' ? `file ${c.inline(fileId)}` : '',
  ].filter(Boolean);
  return `*[${c.inline(str(item.get('kind')) || 'media')}${what.length ? `: ${what.join(', ')}` : ''}]*`;
}

const isMedia = (v: JsonValue | undefined): v is JsonObject => isObject(v) && (v.has('data') || v.has('url') || v.has('file_id'));

/** User prompt or tool return content: text as text, media as notes, anything else as JSON. */
function content(v: JsonValue | undefined, c: Clean, textFenced: boolean): string {
  if (typeof v === 'string') return textFenced ? fenced(c.body(v)) : c.body(v);
  if (isMedia(v)) return mediaNote(v, c);
  if (
    isArray(v) &&
    v.some((item) => typeof item === 'string' || isMedia(item) || (isObject(item) && item.get('kind') === 'text-content'))
  ) {
    return v
      .map((item) => {
        if (typeof item === 'string') return c.body(item);
        if (isObject(item) && item.get('kind') === 'text-content') return c.body(str(item.get('content')));
        if (isMedia(item)) return mediaNote(item, c);
        return fenced(c.body(pyJsonDumps(item)), 'json');
      })
      .join('\n\n');
  }
  return fenced(c.body(pyJsonDumps(v ?? null)), 'json');
}

/** `name` (tool call id), for a heading. */
function tool(p: JsonObject, c: Clean): string {
  const id = p.get('tool_call_id');
  return `${code(c.inline(str(p.get('tool_name'))))}${typeof id === 'string' && id ? ` · ${c.inline(id)}` : ''}`;
}

function part(p: JsonObject, c: Clean): string {
  const kind = str(p.get('part_kind'));
  switch (kind) {
    case 'system-prompt':
      return `### System\n\n${c.body(str(p.get('content')))}`;
    case 'user-prompt':
      return `### User\n\n${content(p.get('content'), c, false)}`;
    case 'text':
      return `### Assistant\n\n${c.body(str(p.get('content')))}`;
    case 'thinking':
      // quoted, so that reasoning never reads as something the model said
      return `### Thinking *(model reasoning)*\n\n${c
        .body(str(p.get('content')))
        .split('\n')
        .map((l) => `> ${l}`)
        .join('\n')}`;
    case 'tool-call':
    case 'builtin-tool-call':
      return `### ${kind === 'tool-call' ? 'Tool call' : 'Built-in tool call'} ${tool(p, c)}\n\n${fenced(c.body(pyJsonDumps(argsAsDict(p.get('args')))), 'json')}`;
    case 'tool-return':
    case 'builtin-tool-return':
      return `### ${kind === 'tool-return' ? 'Tool return' : 'Built-in tool return'} ${tool(p, c)}\n\n${content(p.get('content'), c, true)}`;
    case 'retry-prompt':
      return `### Retry${p.get('tool_name') ? ` ${tool(p, c)}` : ''}\n\n${fenced(c.body(str(p.get('content'))))}`;
    case 'file':
      return `### File\n\n${isMedia(p.get('content')) ? mediaNote(p.get('content') as JsonObject, c) : fenced(c.body(str(p.get('content'))), 'json')}`;
    default:
      // instruction deltas, compaction, speech and kinds this version does not know: named, shown as JSON
      return `### ${c.inline(kind || 'part')}\n\n${fenced(c.body(pyJsonDumps(p)), 'json')}`;
  }
}

/** The heading of a run's transcript: its id, conversation, agent, parent, start and store. */
function runHeader(r: ExportedRun, c: Clean): string {
  const { run } = r;
  const id = (v: string | null): string => (v === null ? '(none)' : code(c.inline(v)));
  const rows = [
    `- conversation: ${id(run.conversationId)}`,
    `- agent: ${run.agentName === null ? '(none)' : c.inline(run.agentName)}`,
    `- parent run: ${id(run.parentRunId)}`,
    `- started: ${c.inline(run.startedAt)}`,
    ...(run.store === undefined ? [] : [`- store: ${c.inline(run.store)}`]),
    `- messages: ${r.messages.length}`,
  ];
  return `# Run ${code(c.inline(run.runId))}\n\n${rows.join('\n')}\n`;
}

/** One message: a heading (`[position]`, request/response, timestamp) and its parts. */
function message(m: ExportedMessage, c: Clean): string {
  const head = `## [${m.position}] ${m.message.kind}${m.timestamp ? ` · ${c.inline(m.timestamp)}` : ''}`;
  const parts = m.message.parts.map((p) => part(p, c));
  return `${head}\n\n${parts.length ? parts.join('\n\n') : '*(no parts)*'}\n`;
}

/** A run's transcript in pieces (its header, then one piece per message), redacted by `redactor` when given. */
export function* transcriptMarkdown(r: ExportedRun, redactor?: Redactor): Generator<string> {
  const c = cleaner(redactor);
  yield runHeader(r, c);
  for (const m of r.messages) yield `\n${message(m, c)}`;
}
