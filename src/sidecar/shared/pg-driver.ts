/**
 * The shared index's driver session, run on the driver thread of a SyncBridge (never imported by the
 * main thread): one connection made as the store reader makes its own (store/postgres/driver.ts), that
 * runs the statements of a batch in order and answers with the last one's rows. The caller says where
 * transactions begin and end (pg-db.ts); a connection that ends without COMMIT, a killed process's
 * included, leaves the server to roll back.
 */
// before pg: without it pg loads Node's fetch to probe for Cloudflare Workers (pg-probe.ts), 15 ms of every search
import '../../store/postgres/pg-probe.js';
import pg from 'pg';
import type { DriverConfig } from '../../store/postgres/driver.js';
import { connectClient } from '../../store/postgres/driver.js';
import type { DriverSession } from '../../store/sync-bridge.js';

export interface IndexStatementRequest {
  readonly text: string;
  readonly values?: readonly unknown[];
}

export interface BatchRequest {
  readonly op: 'batch';
  readonly items: readonly IndexStatementRequest[];
  /** Answer with every statement's rows (one array per item), not only the last one's. */
  readonly all?: boolean;
}

const INT8 = 20;

/** bigint columns as numbers: every integer the index holds is a count, a key or a CRC-32 (all below 2^53). */
const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (oid !== INT8) return pg.types.getTypeParser(oid, format);
    return (v: string) => {
      const n = Number(v);
      if (!Number.isSafeInteger(n)) throw new Error(`an index integer is out of range: ${v}`);
      return n;
    };
  }) as pg.CustomTypesConfig['getTypeParser'],
};

/** Values as posted from the main thread: a Buffer arrives as a Uint8Array, which `pg` would send as JSON. */
const asParam = (v: unknown): unknown =>
  v instanceof Uint8Array && !Buffer.isBuffer(v) ? Buffer.from(v.buffer, v.byteOffset, v.byteLength) : v;

export async function open(config: unknown): Promise<DriverSession> {
  const client = await connectClient(config as DriverConfig, types);
  return {
    async handle(request: unknown) {
      const r = request as BatchRequest;
      if (r.op !== 'batch') throw new Error(`unknown request ${JSON.stringify(r.op)}`);
      const each: unknown[][] = [];
      for (const item of r.items) each.push((await client.query({ text: item.text, values: item.values?.map(asParam) as unknown[] })).rows);
      return r.all === true ? each : (each.at(-1) ?? []);
    },
    async close() {
      // whatever was not committed is rolled back by the server when the connection ends
      await client.end();
    },
  };
}
