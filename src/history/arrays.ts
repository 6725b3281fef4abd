/**
 * An empty array that V8 holds as an array of objects from the start. A `[]` literal starts as one of
 * small integers and changes map at its first push, so code optimized on filled arrays deoptimizes at
 * an empty one (an empty snapshot, a run's first snapshot); when that code is the on-stack replacement
 * of a hot loop, V8 keeps it and every later entry deoptimizes again: bench runs had storms of 400 to
 * 1,000 deopts in `add`, in about one run in eight.
 */
export function objectArray<T>(): T[] {
  const a: Array<T | null> = [null];
  a.pop();
  return a as T[];
}
