import type { JsonObject } from './json-value.js';
import type { Message } from './messages.js';
import type { GlobSet } from '../text/glob.js';

/**
 * Who a rendered part speaks for. A message can carry several (an assistant text plus a tool call),
 * so a message matches every role of its parts.
 */
export type Role = 'user' | 'assistant' | 'system' | 'tool-call' | 'tool-return' | 'retry';

export const ROLES: readonly Role[] = ['user', 'assistant', 'system', 'tool-call', 'tool-return', 'retry'];

export function isRole(s: string): s is Role {
  return (ROLES as readonly string[]).includes(s);
}

/** One part that renders text (spec §4.1, §4.2), in the order `renderMessage` emits its lines. */
export interface PartRole {
  readonly role: Role;
  /** The part's `tool_name` for tool calls, tool returns and retries (null for a retry without a tool). */
  readonly toolName: string | null;
}

function toolName(p: JsonObject): string | null {
  const n = p.get('tool_name');
  return typeof n === 'string' ? n : null;
}

function speechRenders(p: JsonObject): boolean {
  const t = p.get('transcript');
  return typeof t === 'string' && t !== '';
}

/** The role of a request or response part, or null for the parts that render nothing. */
export function partRole(kind: Message['kind'], p: JsonObject): PartRole | null {
  const pk = p.get('part_kind');
  if (kind === 'request') {
    switch (pk) {
      case 'user-prompt':
        return { role: 'user', toolName: null };
      case 'system-prompt':
      case 'instruction-delta':
        return { role: 'system', toolName: null };
      case 'tool-return':
        return { role: 'tool-return', toolName: toolName(p) };
      case 'retry-prompt':
        return { role: 'retry', toolName: toolName(p) };
      case 'speech':
        return speechRenders(p) ? { role: 'user', toolName: null } : null;
      default:
        return null;
    }
  }
  switch (pk) {
    case 'text':
      return { role: 'assistant', toolName: null };
    case 'tool-call':
      return { role: 'tool-call', toolName: toolName(p) };
    case 'speech':
      return speechRenders(p) ? { role: 'assistant', toolName: null } : null;
    default:
      return null;
  }
}

/** Roles of the parts that render, one per rendered line group, in part order. */
export function classifyParts(m: Message): PartRole[] {
  const out: PartRole[] = [];
  for (const p of m.parts) {
    const r = partRole(m.kind, p);
    if (r) out.push(r);
  }
  return out;
}

/** The distinct roles of a message, in first-part order. */
export function messageRoles(m: Message): Role[] {
  return [...new Set(classifyParts(m).map((p) => p.role))];
}

/**
 * Which messages may count as hits: a message qualifies when one of its rendered parts has one of
 * `roles` (any role when empty) and, when `tools` is non-empty, a `tool_name` matching one of its patterns.
 */
export interface PartFilter {
  readonly roles: ReadonlySet<Role>;
  readonly tools: GlobSet;
}

export function isEmptyPartFilter(f: PartFilter): boolean {
  return f.roles.size === 0 && f.tools.size === 0;
}

/** Whether one of the parts satisfies the filter (always true for an empty filter). */
export function partsMatch(parts: readonly PartRole[], f: PartFilter): boolean {
  if (isEmptyPartFilter(f)) return true;
  return parts.some(
    (p) => (f.roles.size === 0 || f.roles.has(p.role)) && (f.tools.size === 0 || (p.toolName !== null && f.tools.has(p.toolName))),
  );
}
