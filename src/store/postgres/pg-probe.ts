/**
 * Imported by the driver before `pg`, on the driver thread. When it loads, pg tells Node from Cloudflare
 * Workers by `navigator.userAgent`, or, without a `navigator`, by constructing a fetch `Response`, which
 * loads Node's whole fetch implementation (10–15 ms of every Postgres search on Node 20). Node 21 and
 * later have a `navigator`; on Node 20 this thread gets the one they would give, and pg reads Node.
 */
const g = globalThis as { navigator?: unknown };
if (g.navigator === undefined) {
  g.navigator = { userAgent: `Node.js/${process.versions.node.split('.')[0]}` };
}
