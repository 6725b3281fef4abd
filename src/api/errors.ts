export { StoreError } from '../store/errors.js';
export { IndexRefusedError } from '../sidecar/errors.js';

/** A request the library cannot carry out as asked (a parameter out of range): nothing was read. */
export class RequestError extends Error {
  override readonly name = 'RequestError';
}
