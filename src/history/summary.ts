import { isArray, isObject, type JsonValue } from '../py/json-value.js';
import type { Message } from './messages.js';

export const SUMMARY_PREFIX = 'Summary of previous conversation:\n\n';
export const SUMMARY_MARKER_KEY = 'pydantic-ai-harness.compaction.summary.v1';

/** Exactly `{"pydantic-ai-harness.compaction.summary.v1": true}`: extra keys mean no match. */
function isSummaryMetadata(v: JsonValue | undefined): boolean {
  return isObject(v) && v.size === 1 && v.get(SUMMARY_MARKER_KEY) === true;
}

/**
 * A compaction summary request (spec §3.1): the union of the three shapes compaction has written.
 * A user *string* that merely starts with the prefix stays searchable: users control that text.
 */
export function isSummaryArtifact(m: Message): boolean {
  if (m.kind !== 'request') return false;
  const metadata = m.raw.get('metadata');
  // Decision (§3.1): the flattened form's request metadata must equal the marker exactly, like the TextContent's
  const flattenedMarker = isSummaryMetadata(metadata);
  for (const p of m.parts) {
    const kind = p.get('part_kind');
    const content = p.get('content');
    if (kind === 'system-prompt') {
      const ref = p.get('dynamic_ref');
      if (typeof content === 'string' && content.startsWith(SUMMARY_PREFIX) && (ref === null || ref === undefined)) return true;
    } else if (kind === 'user-prompt') {
      if (isArray(content)) {
        for (const item of content) {
          if (isObject(item) && item.get('kind') === 'text-content' && isSummaryMetadata(item.get('metadata'))) return true;
        }
      } else if (typeof content === 'string' && flattenedMarker && content.startsWith(SUMMARY_PREFIX)) {
        return true;
      }
    }
  }
  return false;
}
