/** The driver modules a SyncBridge runs on its thread, per server backend (imported there, never here). */
export const DRIVERS = {
  postgres: new URL('./postgres/driver.js', import.meta.url),
  redis: new URL('./redis/driver.js', import.meta.url),
} as const;

/**
 * V8 limits of a driver's thread, by driver. The Redis driver thread turns every reply into buffers
 * and strings that live for that reply only; left to grow, its young generation took 30 MB (a build of
 * the 613 MB store). Capped at 4 MB, and with each reply's buffers let go as it is decoded (redis/reply.ts
 * decodeOnce), that build peaks at 229–277 MB instead of 316–329 MB, for the same CPU time.
 */
export const DRIVER_LIMITS: ReadonlyMap<string, { readonly maxYoungGenerationSizeMb: number }> = new Map([
  [DRIVERS.redis.href, { maxYoungGenerationSizeMb: 4 }],
]);
