/** A problem with the store as a whole: reported as one line on stderr, exit status 2. */
export class StoreError extends Error {
  override readonly name = 'StoreError';
}
