/**
 * JSON values as Python's `json.loads` sees them. Python keeps what JavaScript's JSON.parse loses:
 * `1` (int) vs `1.0` (float), integers of any size, NaN/Infinity, and dict insertion order for
 * integer-like keys. Rendering (repr, json.dumps) and hashing depend on those distinctions.
 */
export class PyInt {
  constructor(readonly value: bigint) {}
}

export class PyFloat {
  constructor(readonly value: number) {}
}

/** Insertion-ordered like a Python dict; a duplicate key keeps its first position and its last value. */
export type JsonObject = Map<string, JsonValue>;
export type JsonArray = JsonValue[];
export type JsonValue = null | boolean | string | PyInt | PyFloat | JsonArray | JsonObject;

export function isObject(v: JsonValue | undefined): v is JsonObject {
  return v instanceof Map;
}

export function isArray(v: JsonValue | undefined): v is JsonArray {
  return Array.isArray(v);
}
