/**
 * A run's replayed record as a Markdown transcript for people: one heading per message (position,
 * request/response, timestamp), then each part: who speaks, tool calls with their arguments, tool
 * returns, retries, thinking marked as such, media noted by type and size (never their bytes). Every
 * piece of store text goes through `clean` (redaction, then terminal escaping, as the caller asks).
 */
import type { Message } from '../history/messages.js';
import { pyJsonDumps } from '../py/repr.js';
import { isArray, isObject, type JsonObject, type JsonValue } from '../py/json-value.js';
import { argsAsDict } from '../render/message.js';
import type { StoreRun } from '../store/reader.js';

export interface TranscriptOptions {
  /** Applied to every piece of store text before it is written (redaction, escaping). Default: as is. */
  readonly clean?: (text: string) => string;
}

export interface TranscriptMessage {
  readonly position: number;
  readonly message: Message;
  /** The stored timestamp, raw (null when none). */
  readonly timestamp: string | null;
}

const str = (v: JsonValue | undefined): string => (v === undefined || v === null ? '' : typeof v === 'string' ? v : pyJsonDumps(v));

/** A fenced block whose fence is longer than any backtick run inside. */
function fenced(text: string, lang = ''): string {
  const longest = Math.max(2, ...(text.match(/`+/g) ?? []).map((s) => s.length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}${lang}\n${text}\n${fence}`;
}

/** Bytes of base64 text. */
function base64Bytes(b64: string): number {
  const s = b64.replace(/\s/g, '');
  return Math.floor((s.length * 3) / 4) - (s.endsWith('==') ? 2 : s.endsWith('=') ? 1 : 0);
}

/** One media item as a note: its kind, media type, size or URL. */
function mediaNote(item: JsonObject, clean: (s: string) => string): string {
  const kind = str(item.get('kind')) || 'media';
  const type = str(item.get('media_type'));
  const data = item.get('data');
  const url = item.get('url');
  const what = [
    type && clean(type),
    typeof data === 'string' ? `${base64Bytes(data)} bytes` : '',
    typeof url === 'string' ? clean(url) : '',
  ]
    .filter(Boolean)
    .join(', ');
  return `*[${clean(kind)}${what ? `: ${what}` : ''}]*`;
}

function contentText(content: JsonValue | undefined, clean: (s: string) => string): string {
  if (typeof content === 'string') return clean(content);
  if (isArray(content)) {
    return content
      .map((item) => {
        if (typeof item === 'string') return clean(item);
        if (isObject(item) && item.get('kind') === 'text-content') return clean(str(item.get('content')));
        if (isObject(item) && (item.has('data') || item.has('url'))) return mediaNote(item, clean);
        return fenced(clean(str(item)), 'json');
      })
      .join('\n\n');
  }
  if (isObject(content) && (content.has('data') || content.has('url'))) return mediaNote(content, clean);
  return fenced(clean(str(content)), 'json');
}

function toolName(p: JsonObject, clean: (s: string) => string): string {
  const name = p.get('tool_name');
  const id = p.get('tool_call_id');
  return `\`${clean(str(name)).replace(/`/g, "'")}\`${typeof id === 'string' && id ? ` (${clean(id)})` : ''}`;
}

function part(kind: Message['kind'], p: JsonObject, clean: (s: string) => string): string {
  const pk = str(p.get('part_kind'));
  switch (pk) {
    case 'system-prompt':
      return `**System**\n\n${clean(str(p.get('content')))}`;
    case 'user-prompt':
      return `**User**\n\n${contentText(p.get('content'), clean)}`;
    case 'instruction-delta':
      return `**Instructions**\n\n${fenced(clean(str(p.get('content') ?? p)))}`;
    case 'tool-return':
      return `**Tool return** ${toolName(p, clean)}\n\n${typeof p.get('content') === 'string' ? fenced(clean(str(p.get('content')))) : contentText(p.get('content'), clean)}`;
    case 'retry-prompt':
      return `**Retry**${p.get('tool_name') ? ` ${toolName(p, clean)}` : ''}\n\n${fenced(clean(str(p.get('content'))))}`;
    case 'text':
      return `**Assistant**\n\n${clean(str(p.get('content')))}`;
    case 'tool-call':
      return `**Tool call** ${toolName(p, clean)}\n\n${fenced(clean(pyJsonDumps(argsAsDict(p.get('args')))), 'json')}`;
    case 'thinking':
      return `**Thinking** *(model reasoning)*\n\n${clean(str(p.get('content')))
        .split('\n')
        .map((l) => `> ${l}`)
        .join('\n')}`;
    case 'file':
      return `**File**\n\n${isObject(p.get('content')) ? mediaNote(p.get('content') as JsonObject, clean) : '*[file]*'}`;
    default:
      // built-in tool activity, compaction, speech and kinds this version does not know: named, content as JSON
      return `**${clean(pk || (kind === 'request' ? 'request part' : 'response part'))}**\n\n${fenced(clean(pyJsonDumps(p)), 'json')}`;
  }
}

/** The heading of a run's transcript: its id, conversation, agent, parent and start. */
export function transcriptHeader(run: StoreRun, messages: number, options: TranscriptOptions = {}): string {
  const clean = options.clean ?? ((s: string) => s);
  const rows = [
    `- conversation: ${run.conversationId === null ? '(none)' : `\`${clean(run.conversationId)}\``}`,
    `- agent: ${run.agentName === null ? '(none)' : clean(run.agentName)}`,
    `- parent run: ${run.parentRunId === null ? '(none)' : `\`${clean(run.parentRunId)}\``}`,
    `- started: ${clean(run.startedAt)}`,
    `- messages: ${messages}`,
  ];
  return `# Run \`${clean(run.runId)}\`\n\n${rows.join('\n')}\n`;
}

/** One message of the record: a heading (position, request/response, timestamp) and its parts. */
export function transcriptMessage(m: TranscriptMessage, options: TranscriptOptions = {}): string {
  const clean = options.clean ?? ((s: string) => s);
  const head = `## #${m.position} ${m.message.kind}${m.timestamp ? ` · ${clean(m.timestamp)}` : ''}`;
  const parts = m.message.parts.map((p) => part(m.message.kind, p, clean));
  return `${head}\n\n${parts.length ? parts.join('\n\n') : '*(no parts)*'}\n`;
}
