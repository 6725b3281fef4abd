/**
 * The names inside a run id that pydantic-ai-harness's `StepPersistence` derived for an agent
 * (docs/backends.md, "Derived run ids"): given an agent name and no explicit run id, the run id is
 * `sp-` followed by the URL-safe base64, `=` padding stripped, of the UTF-8 bytes
 * `<n>:<agent name><inner run id>`, where n is the agent name's length in bytes (decimal) and the
 * inner run id is the one pydantic-ai gave the run. Without an agent name the run id is the inner
 * one, with nothing to decode. Pure: anything that is not exactly such an id decodes to null (and is
 * shown raw), so a run id is never renamed on a guess.
 */

export interface RunIdName {
  readonly agent: string;
  readonly innerRunId: string;
}

const PREFIX = 'sp-';
const BASE64URL = /^[A-Za-z0-9_-]+$/;
/** What Python's `str(len(...))` writes: no sign, no leading zero (but `0` itself). */
const LENGTH = /^(?:0|[1-9][0-9]{0,8})$/;
/** C0, DEL and C1: never part of a name a person gave (a decoded text holding one is shown raw). */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const COLON = 0x3a;
// fatal: bytes that are not UTF-8 are no name; ignoreBOM: a leading U+FEFF is kept, never dropped
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function text(bytes: Uint8Array): string | null {
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}

/** The agent name and inner run id of a derived `sp-` run id, or null when `runId` is not exactly one. */
export function decodeRunId(runId: string): RunIdName | null {
  if (!runId.startsWith(PREFIX)) return null;
  const encoded = runId.slice(PREFIX.length);
  if (!BASE64URL.test(encoded)) return null;
  const payload = Buffer.from(encoded, 'base64url');
  // only the one spelling upstream writes: no padding, no stray bits, nothing the decoder skipped
  if (payload.toString('base64url') !== encoded) return null;
  const colon = payload.indexOf(COLON);
  if (colon < 1) return null;
  const digits = payload.subarray(0, colon).toString('latin1');
  if (!LENGTH.test(digits)) return null;
  const nameEnd = colon + 1 + Number(digits);
  // the inner run id is never empty: pydantic-ai gives every run one
  if (nameEnd >= payload.length) return null;
  const agent = text(payload.subarray(colon + 1, nameEnd));
  const innerRunId = text(payload.subarray(nameEnd));
  if (agent === null || innerRunId === null || CONTROL.test(agent) || CONTROL.test(innerRunId)) return null;
  return { agent, innerRunId };
}
