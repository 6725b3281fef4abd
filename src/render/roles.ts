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

/** Who speaks in a rendered part, and for which tool. */
export interface PartRole {
  readonly role: Role;
  /** The part's `tool_name` for tool calls, tool returns and retries (null for a retry without a tool). */
  readonly toolName: string | null;
}

/**
 * Which messages may count as hits: a message qualifies when one of its rendered parts has one of
 * `roles` (any role when absent or empty) and, when `tools` is non-empty, a `tool_name` matching one of its patterns.
 */
export interface PartFilter {
  readonly roles?: ReadonlySet<Role>;
  readonly tools?: GlobSet;
}

export function isEmptyPartFilter(f: PartFilter): boolean {
  return !f.roles?.size && !f.tools?.size;
}

/** Whether one of the parts satisfies the filter (always true for an empty filter). */
export function partsMatch(parts: readonly PartRole[], f: PartFilter): boolean {
  if (isEmptyPartFilter(f)) return true;
  return parts.some((p) => (!f.roles?.size || f.roles.has(p.role)) && (!f.tools?.size || (p.toolName !== null && f.tools.has(p.toolName))));
}
