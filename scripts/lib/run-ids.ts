/**
 * Run ids as pydantic-ai-harness's `StepPersistence` derives them for an agent with no explicit run id
 * (docs/backends.md, "Derived run ids"): `sp-` + URL-safe base64 without `=` padding of the UTF-8
 * bytes `<byte length of the name>:<name><inner run id>`. For fixtures and demos (convsearch only decodes).
 */
export function derivedRunId(agentName: string, innerRunId: string): string {
  const payload = Buffer.from(`${Buffer.byteLength(agentName, 'utf8')}:${agentName}${innerRunId}`, 'utf8');
  return `sp-${payload.toString('base64url')}`;
}

/** `sp-` and the base64url of arbitrary bytes: a malformed id for tests (bad UTF-8, a wrong length, …). */
export function spIdOfBytes(bytes: Uint8Array): string {
  return `sp-${Buffer.from(bytes).toString('base64url')}`;
}
