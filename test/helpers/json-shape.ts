import { isArray, isObject, PyFloat, PyInt, type JsonValue } from '../../src/py/json-value.js';

/** A parsed value with everything Python's view keeps spelled out (key order, int vs float, -0.0), for exact comparison. */
export function jsonShape(v: JsonValue): unknown {
  if (v instanceof PyInt) return ['int', v.value.toString()];
  if (v instanceof PyFloat) return ['float', Object.is(v.value, -0) ? '-0' : String(v.value)];
  if (isArray(v)) return ['list', v.map(jsonShape)];
  if (isObject(v)) return ['dict', [...v].map(([k, x]) => [k, jsonShape(x)])];
  return v;
}
