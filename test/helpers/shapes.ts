/**
 * The documented JSON shapes (docs/cli.md, "Output schemas"), as data the tests validate real
 * output against. Objects list every key (no more, no fewer); `'a|b'` is a union of JSON types.
 */
export type Shape = string | { readonly $array: Shape } | { readonly [key: string]: Shape };

const warning: Shape = 'object';
const filters: Shape = {
  roles: { $array: 'string' },
  tools: { $array: 'string' },
  min_score: 'number|null',
  agents: { $array: 'string' },
  parent_run_id: 'string|null',
  since: 'string|null',
  until: 'string|null',
  phrases: { $array: 'string' },
};
const part: Shape = { role: 'string', tool_name: 'string|null', text: 'string' };
/** `run_id_decoded`, `parent_run_id_decoded` when not null. */
export const RUN_ID_DECODED: Shape = { agent: 'string', inner_run_id: 'string' };
/** `conversation_metadata` (hits) and `metadata` (conversations) when not null. */
export const CONVERSATION_METADATA: Shape = { title: 'string', tags: { $array: 'string' }, outcome: 'string' };

export const HIT: Shape = {
  rank: 'integer',
  score: 'number',
  run_id: 'string',
  conversation_id: 'string|null',
  agent_name: 'string|null',
  run_id_decoded: 'object|null',
  conversation_metadata: 'object|null',
  message_index: 'integer',
  roles: { $array: 'string' },
  timestamp: 'string|null',
  first_step: 'integer|null',
  text: 'string',
  parts: { $array: part },
  excerpt: { $array: { index: 'integer', text: 'string', hit: 'boolean' } },
  locations: 'array|null',
  explain: 'object|null',
};

export const EXPLAIN: Shape = {
  score: 'number',
  n: 'integer',
  dl: 'integer',
  avgdl: 'number',
  k1: 'number',
  b: 'number',
  terms: { $array: { term: 'string', tf: 'integer', df: 'integer', idf: 'number', contribution: 'number' } },
};

export const LOCATION: Shape = {
  run_id: 'string',
  conversation_id: 'string|null',
  agent_name: 'string|null',
  run_id_decoded: 'object|null',
  message_index: 'integer',
  timestamp: 'string|null',
};

const searchParams = {
  query: 'string',
  scope: 'string',
  conversation_id: 'string|null',
  run_id: 'string|null',
  max_matches: 'integer',
  context_lines: 'integer',
  bm25_k1: 'number',
  bm25_b: 'number',
  collapse: 'boolean',
  explain: 'boolean',
  sort: 'string',
  reverse: 'boolean',
  tokenizer: 'string',
  parity: 'boolean',
  filters,
};
const scopeError: Shape = 'object|null';
const summary: Shape = { hits: 'integer', total_matches: 'integer', messages: 'integer', runs: 'integer', skipped_snapshots: 'integer' };

const standing = {
  checked: 'boolean',
  stale: 'boolean|null',
  synced_at: 'string|null',
  behind_runs: 'integer|null',
  behind_minutes: 'integer|null',
};
/** `index` of search, runs and conversations documents answered through a shared index (absent otherwise). */
export const INDEX: Shape = { shared: 'boolean', ...standing, stores: { $array: { store: 'string', ...standing } } };

export const SEARCH_DOC: Shape = {
  schema_version: 'integer',
  ...searchParams,
  outcome: 'string',
  message: 'string|null',
  total_messages: 'integer',
  hits: { $array: HIT },
  summary,
  warnings: { $array: warning },
  error: scopeError,
};

export const RUN_MATCH: Shape = {
  run_id: 'string',
  conversation_id: 'string|null',
  agent_name: 'string|null',
  run_id_decoded: 'object|null',
  matches: 'integer',
  best_score: 'number',
};

/** `search -l --json`: the search document with `runs` in place of `hits`. */
export const SEARCH_RUNS_DOC: Shape = (() => {
  const { hits: _hits, ...rest } = SEARCH_DOC as Record<string, Shape>;
  return { ...rest, runs: { $array: RUN_MATCH } };
})();

export const SEARCH_RUNS_EVENTS: Record<string, Shape> = {
  begin: searchParams,
  run: RUN_MATCH,
  end: { outcome: 'string', message: 'string|null', total_messages: 'integer', warnings: { $array: warning }, error: scopeError },
  summary,
};

export const SEARCH_EVENTS: Record<string, Shape> = {
  begin: searchParams,
  hit: HIT,
  end: { outcome: 'string', message: 'string|null', total_messages: 'integer', warnings: { $array: warning }, error: scopeError },
  summary,
};

export const RUN: Shape = {
  run_id: 'string',
  conversation_id: 'string|null',
  parent_run_id: 'string|null',
  agent_name: 'string|null',
  run_id_decoded: 'object|null',
  parent_run_id_decoded: 'object|null',
  started_at: 'string',
  snapshots: 'integer',
  interrupted_snapshots: 'integer',
  messages: 'integer',
  last_step: 'integer|null',
};

export const RUNS_DOC: Shape = { schema_version: 'integer', runs: { $array: RUN }, warnings: { $array: warning } };
export const RUNS_EVENTS: Record<string, Shape> = {
  begin: {
    filters: {
      conversation_id: 'string|null',
      agent_name: 'string|null',
      since: 'string|null',
      until: 'string|null',
      parent_run_id: 'string|null',
    },
    sort: 'string',
    reverse: 'boolean',
    limit: 'integer|null',
  },
  run: RUN,
  end: { runs: 'integer', warnings: { $array: warning } },
};

export const CONVERSATION: Shape = {
  conversation_id: 'string|null',
  runs: 'integer',
  first_started_at: 'string',
  last_started_at: 'string',
  messages: 'integer',
  agents: { $array: 'string' },
  metadata: 'object|null',
};
export const CONVERSATIONS_DOC: Shape = {
  schema_version: 'integer',
  conversations: { $array: CONVERSATION },
  warnings: { $array: warning },
};
export const CONVERSATIONS_EVENTS: Record<string, Shape> = {
  begin: { sort: 'string', reverse: 'boolean', limit: 'integer|null' },
  conversation: CONVERSATION,
  end: { conversations: 'integer', warnings: { $array: warning } },
};

export const TOOL: Shape = {
  tool_name: 'string',
  calls: 'integer',
  returns: 'integer',
  retries: 'integer',
  runs: 'integer',
  first_seen: 'string|null',
  last_seen: 'string|null',
};
export const TOOLS_DOC: Shape = { schema_version: 'integer', tools: { $array: TOOL }, warnings: { $array: warning } };
export const TOOLS_EVENTS: Record<string, Shape> = {
  begin: {
    filters: {
      conversation_id: 'string|null',
      run_id: 'string|null',
      agents: { $array: 'string' },
      since: 'string|null',
      until: 'string|null',
    },
    collapse: 'boolean',
  },
  tool: TOOL,
  end: { tools: 'integer', warnings: { $array: warning } },
};

const message = { kind: 'string', roles: { $array: 'string' }, timestamp: 'string|null', text: 'string', parts: { $array: part } };
export const SHOW_MESSAGE: Shape = { index: 'integer', ...message, first_seq: 'integer', first_step: 'integer|null' };
const windowShape: Shape = 'object|null';
export const INTERRUPTED: Shape = {
  seq: 'integer',
  step: 'integer|null',
  reason: 'string|null',
  messages: { $array: { position: 'integer', ...message } },
};
export const SHOW_DOC: Shape = {
  schema_version: 'integer',
  run: RUN,
  window: windowShape,
  messages: { $array: SHOW_MESSAGE },
  interrupted: 'array|null',
  warnings: { $array: warning },
};
export const SHOW_EVENTS: Record<string, Shape> = {
  begin: { run: RUN, window: windowShape },
  message: SHOW_MESSAGE,
  interrupted: INTERRUPTED,
  end: { messages: 'integer', warnings: { $array: warning } },
};

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

/** Throws with a JSON path when `value` does not have `shape`. */
export function checkShape(value: unknown, shape: Shape, path = '$'): void {
  if (typeof shape === 'string') {
    const allowed = shape.split('|');
    const t = typeOf(value);
    if (!(allowed.includes(t) || (t === 'integer' && allowed.includes('number')))) {
      throw new Error(`${path}: expected ${shape}, got ${t} (${JSON.stringify(value)?.slice(0, 80)})`);
    }
    return;
  }
  if ('$array' in shape && Object.keys(shape).length === 1) {
    if (!Array.isArray(value)) throw new Error(`${path}: expected an array`);
    value.forEach((v, i) => {
      checkShape(v, (shape as { $array: Shape }).$array, `${path}[${i}]`);
    });
    return;
  }
  if (typeOf(value) !== 'object') throw new Error(`${path}: expected an object, got ${typeOf(value)}`);
  const obj = value as Record<string, unknown>;
  const want = Object.keys(shape);
  const got = Object.keys(obj);
  const missing = want.filter((k) => !(k in obj));
  const extra = got.filter((k) => !want.includes(k));
  if (missing.length || extra.length) throw new Error(`${path}: missing ${JSON.stringify(missing)}, undocumented ${JSON.stringify(extra)}`);
  for (const k of want) checkShape(obj[k], (shape as Record<string, Shape>)[k]!, `${path}.${k}`);
}

/** Validates NDJSON text: every line `{type, schema_version, data}` with a known type and its data shape. */
export function checkEvents(text: string, events: Record<string, Shape>): Array<{ type: string; data: Record<string, unknown> }> {
  const lines = text.split('\n');
  if (lines.pop() !== '') throw new Error('NDJSON must end with a newline');
  return lines.map((line, i) => {
    const e = JSON.parse(line) as { type: string; schema_version: number; data: Record<string, unknown> };
    checkShape(e, { type: 'string', schema_version: 'integer', data: 'object' }, `line ${i + 1}`);
    if (e.schema_version !== 1) throw new Error(`line ${i + 1}: schema_version ${e.schema_version}`);
    const shape = events[e.type];
    if (!shape) throw new Error(`line ${i + 1}: undocumented event type ${e.type}`);
    checkShape(e.data, shape, `line ${i + 1}.data`);
    return e;
  });
}

/** Every key name used in the shapes (for checking the documentation mentions them). */
export function shapeKeys(shapes: readonly Shape[]): Set<string> {
  const out = new Set<string>();
  const walk = (s: Shape): void => {
    if (typeof s === 'string') return;
    if ('$array' in s && Object.keys(s).length === 1) {
      walk((s as { $array: Shape }).$array);
      return;
    }
    for (const [k, v] of Object.entries(s)) {
      out.add(k);
      walk(v);
    }
  };
  shapes.forEach(walk);
  return out;
}
