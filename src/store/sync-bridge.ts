import { MessageChannel, Worker, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { DRIVER_LIMITS } from './drivers.js';
import { StoreError } from './errors.js';

/**
 * An asynchronous database driver behind a synchronous call, because the replay pipeline (and the
 * `StoreReader` seam) is synchronous. The driver runs in a worker thread (`sync-worker.ts`); `call`
 * posts a request and blocks this thread on `Atomics.wait` until the worker has posted its reply,
 * which `receiveMessageOnPort` then takes without the event loop. The driver module is imported only
 * inside the worker, so a process that never opens a server store never loads a driver.
 */

/**
 * What a driver module exports: `open(config)` resolving to a session that answers requests in order.
 * `waiting`: the requests the thread received after this one, not yet answered (a session may read
 * ahead for them in this request's round trip).
 */
export interface DriverSession {
  handle(request: unknown, waiting: readonly unknown[]): Promise<unknown>;
  close(): Promise<void>;
}
export type OpenDriver = (config: unknown) => Promise<DriverSession>;

export type DriverReply = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly message: string };

/** Signal slots shared with the worker: replies posted, stopped, and a heartbeat that ticks while it lives. */
export const REPLIES = 0;
export const STOPPED = 1;
export const HEARTBEAT = 2;
export const HEARTBEAT_MS = 250;

const WORKER = new URL('./sync-worker.js', import.meta.url);
/** How often a blocked call looks whether the worker stopped without replying. */
const POLL_MS = 1000;
/**
 * A worker whose heartbeat has not ticked for this long is gone (it failed to start, or died without
 * its handlers running): the call fails instead of waiting forever. Generous: a loaded machine can take
 * seconds to start a thread.
 */
const SILENT_MS = 30_000;

export interface BridgeData {
  readonly driver: string;
  readonly signal: SharedArrayBuffer;
  readonly port: MessagePort;
}

/** The first message to a driver thread, never answered: open the session with this configuration. */
export interface OpenMessage {
  readonly op: 'open';
  readonly config: unknown;
}

/**
 * A driver thread no bridge uses: started ahead of its bridge (see prestart.ts; the driver is being
 * imported already), or handed back by a bridge that closed its session cleanly (a process that opens
 * stores again and again, a library user's, pays the thread's start once).
 */
interface Spare {
  readonly worker: Worker;
  readonly port: MessagePort;
  readonly signal: SharedArrayBuffer;
  /** Replies the thread posted so far (the shared count goes on from there). */
  readonly replies: number;
  /** The configuration (JSON) of the session it was told to open ahead (prestart), if any. */
  opened?: string;
}

/**
 * At most one spare per driver module: a command opens one store at a time. The process's, not this
 * module copy's: the launcher's small bundle starts threads (src/prestart.ts) that the command line's
 * bundle, a copy of this module of its own, takes.
 */
const SPARES = Symbol.for('convsearch.sync-bridge.spares');
const spares: Map<string, Spare> = ((globalThis as { [SPARES]?: Map<string, Spare> })[SPARES] ??= new Map());

/**
 * Threads started and not yet up (answered once, or ended), and what waits for none to be left: the
 * process's, like the spares. A V8 flag set while a thread boots makes V8 refuse Node's code cache of
 * the modules the thread loads, which it then compiles from source (a driver thread's start took 2.4×
 * the instructions under the launcher's heap flag, callgrind), so the launcher sets its flag through
 * whenThreadsUp.
 */
interface Booting {
  readonly threads: Set<Worker>;
  readonly waiting: Array<() => void>;
}
const BOOTING = Symbol.for('convsearch.sync-bridge.booting');
const booting: Booting = ((globalThis as { [BOOTING]?: Booting })[BOOTING] ??= { threads: new Set(), waiting: [] });

/** Runs `fn` once every driver thread started so far is up: now when none is starting. */
export function whenThreadsUp(fn: () => void): void {
  if (booting.threads.size === 0) fn();
  else booting.waiting.push(fn);
}

function threadUp(worker: Worker): void {
  if (!booting.threads.delete(worker) || booting.threads.size > 0) return;
  for (const fn of booting.waiting.splice(0)) fn();
}

function startThread(driver: URL): Spare {
  const { port1, port2 } = new MessageChannel();
  const signal = new SharedArrayBuffer(12);
  const workerData: BridgeData = { driver: driver.href, signal, port: port2 };
  // a worker inherits the process's flags; --input-type (node -e with ESM) stops it from starting
  const execArgv = process.execArgv.filter((a) => !a.startsWith('--input-type'));
  const worker = new Worker(WORKER, { workerData, transferList: [port2], execArgv, resourceLimits: DRIVER_LIMITS.get(driver.href) });
  booting.threads.add(worker);
  // a reader that is never closed (or a spare never taken) must not keep the process alive
  worker.unref();
  // a spare handed back keeps its port; the port must not keep the process alive either
  port1.unref();
  return { worker, port: port1, signal, replies: 0 };
}

/**
 * The spare thread of `driver`, taken for a session of settings `wanted` (JSON); a spare that opened a
 * session of other settings ahead is of no use to anyone now, and ends.
 */
function takeSpare(driver: URL, wanted: string): Spare | undefined {
  const spare = spares.get(driver.href);
  spares.delete(driver.href);
  if (spare?.opened === undefined || spare.opened === wanted) return spare;
  spare.port.close();
  void spare.worker.terminate();
  threadUp(spare.worker);
  return undefined;
}

export class SyncBridge {
  private readonly worker: Worker;
  private readonly port: MessagePort;
  private readonly signal: Int32Array;
  /** No more calls: closed, or the driver thread is gone. */
  private closed = false;
  private ended = false;
  /** Requests posted and replies taken so far (replies arrive in request order). */
  private posted = 0;
  private received = 0;

  /** `label` names the store in errors (never with credentials); `silentMs` overrides how long a silent thread is waited for. */
  constructor(
    private readonly driver: URL,
    config: unknown,
    private readonly label: string,
    private readonly silentMs = SILENT_MS,
  ) {
    const wanted = JSON.stringify(config);
    const thread = takeSpare(driver, wanted) ?? startThread(driver);
    this.worker = thread.worker;
    this.port = thread.port;
    this.signal = new Int32Array(thread.signal);
    this.posted = this.received = thread.replies;
    if (thread.opened !== wanted) {
      const open: OpenMessage = { op: 'open', config };
      this.port.postMessage(open);
    }
  }

  /**
   * Starts a thread for `driver` now (it imports the driver at once); the next bridge on that driver
   * takes it. With `config`, the thread opens that session too (connects) as soon as the driver is
   * imported, and is taken by the next bridge with those settings. Returns the thread's id.
   */
  static prestart(driver: URL, config?: unknown): number {
    const wanted = config === undefined ? undefined : JSON.stringify(config);
    let spare = spares.get(driver.href);
    // one that opened a session of other settings ends
    if (wanted !== undefined && spare?.opened !== undefined && spare.opened !== wanted) spare = takeSpare(driver, wanted);
    if (spare === undefined) spares.set(driver.href, (spare = startThread(driver)));
    if (config !== undefined && spare.opened === undefined) {
      const open: OpenMessage = { op: 'open', config };
      spare.port.postMessage(open);
      spare.opened = JSON.stringify(config);
    }
    return spare.worker.threadId;
  }

  /**
   * Sends a request without waiting: the driver thread works on it while this one goes on. Its reply
   * is taken with `take(ticket)` (or dropped by the next `call`/`take` of a later ticket).
   */
  post(request: unknown): number {
    if (this.closed) throw new StoreError(`${this.label}: the store was closed`);
    this.port.postMessage(request);
    return ++this.posted;
  }

  /** Whether the reply to `ticket` can still be taken (not taken, not dropped). */
  pending(ticket: number): boolean {
    return ticket > this.received && ticket <= this.posted;
  }

  /** Waits for the reply to `ticket` (replies come in order; earlier unclaimed ones are dropped). */
  take<T>(ticket: number): T {
    let reply: DriverReply | undefined;
    while (this.received < ticket) {
      reply = this.next();
      this.received++;
    }
    if (reply === undefined) throw new StoreError(`${this.label}: reply ${ticket} was already taken`);
    if (!reply.ok) throw new StoreError(`${this.label}: ${reply.message}`);
    return reply.value as T;
  }

  /** Sends one request and waits for its reply; a driver failure becomes a StoreError. */
  call<T>(request: unknown): T {
    return this.take<T>(this.post(request));
  }

  /** Blocks until the driver thread has posted one more reply than taken so far, and takes it. */
  private next(): DriverReply {
    let beat = Atomics.load(this.signal, HEARTBEAT);
    let beatAt = Date.now();
    while (Atomics.load(this.signal, REPLIES) === this.received) {
      Atomics.wait(this.signal, REPLIES, this.received, POLL_MS);
      if (Atomics.load(this.signal, REPLIES) !== this.received) break;
      if (Atomics.load(this.signal, STOPPED) === 1) {
        this.closed = true;
        throw new StoreError(`${this.label}: the driver thread stopped`);
      }
      const now = Atomics.load(this.signal, HEARTBEAT);
      if (now !== beat) {
        beat = now;
        beatAt = Date.now();
      } else if (Date.now() - beatAt > this.silentMs) {
        this.closed = true;
        throw new StoreError(
          `${this.label}: the driver thread is not running (${beat === 0 ? 'it did not start' : 'it stopped answering'})`,
        );
      }
    }
    const reply = receiveMessageOnPort(this.port)?.message as DriverReply | undefined;
    threadUp(this.worker);
    if (reply === undefined) throw new StoreError(`${this.label}: the driver thread gave no reply`);
    return reply;
  }

  /**
   * Ends the session (the driver closes its connection). A thread that closed it cleanly is kept as
   * its driver's spare for the next bridge; any other ends. Idempotent.
   */
  close(): void {
    if (this.ended) return;
    this.ended = true;
    let clean = false;
    try {
      // a session still answering ends its transaction and connection itself
      if (!this.closed) {
        this.take(this.post({ op: 'close' }));
        clean = Atomics.load(this.signal, STOPPED) === 0;
      }
    } catch {
      // closing is best effort: the connection dies with the thread anyway
    } finally {
      this.closed = true;
      if (clean && !spares.has(this.driver.href)) {
        spares.set(this.driver.href, {
          worker: this.worker,
          port: this.port,
          signal: this.signal.buffer as SharedArrayBuffer,
          replies: this.received,
        });
      } else {
        this.port.close();
        void this.worker.terminate();
        threadUp(this.worker);
      }
    }
  }
}
