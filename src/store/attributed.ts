/**
 * A reader whose failures name it. A backend's own error (a damaged SQLite page shows only when a query
 * reaches it) carries no store; caught where it leaves the reader that raised it, it is turned into a
 * StoreError naming that store, so that with several stores open none is blamed for another's fault.
 */
import { StoreError } from './errors.js';
import type { StoreReader } from './reader.js';

/** Results that are read later (a generator, a statement's rows): their failures show as they are read. */
function lazy(v: unknown): v is Iterable<unknown> {
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof (v as Iterable<unknown>)[Symbol.iterator] === 'function' &&
    !Array.isArray(v) &&
    !(v instanceof Map) &&
    !(v instanceof Set) &&
    !Buffer.isBuffer(v)
  );
}

function* guarded<T>(items: Iterable<T>, blame: (e: unknown) => unknown): Generator<T, unknown, undefined> {
  const it = items[Symbol.iterator]();
  let done = false;
  try {
    for (;;) {
      let next: IteratorResult<T>;
      try {
        next = it.next();
      } catch (e) {
        done = true;
        throw blame(e);
      }
      if (next.done) {
        done = true;
        return next.value;
      }
      yield next.value;
    }
  } finally {
    if (!done) it.return?.();
  }
}

/** `reader`, each of its calls (and what they stream) turning the backend's own failures into StoreErrors naming it. */
export function attributed<R extends StoreReader>(reader: R): R {
  const blame = (e: unknown): unknown => (e instanceof StoreError ? e : (reader.storeError(e) ?? e));
  return new Proxy(reader, {
    get(target, prop) {
      const v: unknown = Reflect.get(target, prop, target);
      if (typeof v !== 'function' || prop === 'storeError' || prop === 'constructor') return v;
      return (...args: unknown[]): unknown => {
        let r: unknown;
        try {
          r = (v as (...a: unknown[]) => unknown).apply(target, args);
        } catch (e) {
          throw blame(e);
        }
        return lazy(r) ? guarded(r, blame) : r;
      };
    },
  });
}
