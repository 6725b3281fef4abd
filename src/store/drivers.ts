/** The driver modules a SyncBridge runs on its thread, per server backend (imported there, never here). */
export const DRIVERS = {
  postgres: new URL('./postgres/driver.js', import.meta.url),
  redis: new URL('./redis/driver.js', import.meta.url),
} as const;
