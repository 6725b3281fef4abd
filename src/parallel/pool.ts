/**
 * The one protocol between the main thread and the worker threads that replay for it (the `--no-index`
 * digests and the index build): a worker opens the very bytes the main thread reads
 * (`StoreReader.share()`), posts its results in batches, and finishes; the main thread receives the
 * batches synchronously (it is busy replaying or writing itself, and the pipeline is synchronous).
 * A worker never throws: a failure is posted as an error and the main thread does that work itself.
 */
import { MessageChannel, receiveMessageOnPort, Worker, workerData, type MessagePort } from 'node:worker_threads';
import type { StoreReader, StoreShare } from '../store/reader.js';
import { openSharedReader } from '../store/shared.js';

/** Slots of the signal block both sides share. */
const POSTED = 0;
const DONE = 1;
const TAKEN = 2;
const PROGRESS = 3;
/** Set by the loader when the task's script could not be loaded (see BOOT). */
const LOAD_FAILED = 4;
const SLOTS = 5;

/**
 * What the worker thread runs: it loads the task's script, and when that fails (a missing or broken
 * file) says so through the signal block and finishes. The main thread waits in Atomics.wait, so it
 * would never see the worker's error event: without this it would wait forever.
 * A bundle (`.cjs`, what the command runs) is required: import() would start the thread's ES module
 * loader and lex the whole bundle for its exports first, 30-100 ms before the worker takes any work.
 */
const BOOT = `const { workerData } = require('node:worker_threads');
const failed = () => {
  const s = new Int32Array(workerData.signal);
  Atomics.store(s, ${LOAD_FAILED}, 1);
  Atomics.store(s, ${DONE}, 1);
  Atomics.notify(s, ${POSTED});
};
if (new URL(workerData.script).pathname.endsWith('.cjs')) {
  try {
    require(require('node:url').fileURLToPath(workerData.script));
  } catch {
    failed();
  }
} else import(workerData.script).catch(failed);`;

/** What every pool worker is given; a task adds its own fields. */
export interface PoolWorkerData {
  /** The task's script, as a URL (the loader imports it). */
  readonly script: string;
  readonly share: StoreShare;
  readonly signal: SharedArrayBuffer;
  readonly port: MessagePort;
}

type Message<T> = { readonly results: T[] } | { readonly error: string };

/** The main thread's handle on one worker. */
export class PoolWorker<T> {
  private readonly signal: Int32Array;
  private received = 0;
  /** It posted an error, or finished without delivering what was asked of it. */
  failed = false;

  constructor(
    private readonly worker: Worker,
    private readonly port: MessagePort,
    signal: SharedArrayBuffer,
  ) {
    this.signal = new Int32Array(signal);
  }

  /**
   * Hands the batches posted so far (at most `max` of them) to `onBatch` without waiting; true when any
   * arrived. A batch left in the port stays serialized, off this thread's heap.
   */
  receive(onBatch: (results: T[]) => void, max = Infinity): boolean {
    let n = 0;
    for (; n < max; n++) {
      const m = receiveMessageOnPort(this.port);
      if (m === undefined) break;
      this.received++;
      const message = m.message as Message<T>;
      if ('error' in message) this.failed = true;
      else onBatch(message.results);
      Atomics.add(this.signal, TAKEN, 1);
      Atomics.notify(this.signal, TAKEN);
    }
    return n > 0;
  }

  /** Its script could not be loaded: it did nothing. */
  get loadFailed(): boolean {
    return Atomics.load(this.signal, LOAD_FAILED) === 1;
  }

  /** It finished and everything it posted has been received. */
  get finished(): boolean {
    return Atomics.load(this.signal, DONE) === 1 && this.received >= Atomics.load(this.signal, POSTED);
  }

  /** Sleeps until it posts or finishes, or `ms` pass. */
  wait(ms: number): void {
    if (Atomics.load(this.signal, DONE) === 1) return;
    Atomics.wait(this.signal, POSTED, Atomics.load(this.signal, POSTED), ms);
  }

  /** Its own count of the work done (for progress). */
  get progress(): number {
    return Atomics.load(this.signal, PROGRESS);
  }

  /** Every batch until it finishes, calling `onWait` between looks; false when it failed. */
  drain(onBatch: (results: T[]) => void, onWait: () => void, pollMs: number): boolean {
    while (!this.finished) {
      if (this.receive(onBatch)) continue;
      this.wait(pollMs);
      onWait();
    }
    this.receive(onBatch);
    return !this.failed && !this.loadFailed;
  }

  /** Ends a worker whose results are no longer wanted. */
  stop(): void {
    this.port.close();
    void this.worker.terminate();
  }
}

/** Starts `script` on the store's shared bytes with the task's `data` (plain data: it is copied over). */
export function startPoolWorker<T>(script: URL, share: StoreShare, data: object): PoolWorker<T> {
  const { port1, port2 } = new MessageChannel();
  const signal = new SharedArrayBuffer(4 * SLOTS);
  const full: PoolWorkerData = { ...data, script: script.href, share, signal, port: port2 };
  const worker = new Worker(BOOT, { eval: true, workerData: full, transferList: [port2] });
  worker.unref();
  return new PoolWorker<T>(worker, port1, signal);
}

/** The worker side: what a task posts its results through. */
export class PoolChannel<T> {
  private readonly signal: Int32Array;

  constructor(private readonly data: PoolWorkerData) {
    this.signal = new Int32Array(data.signal);
  }

  post(results: T[], transfer: ArrayBuffer[] = []): void {
    this.send({ results }, transfer);
  }

  /** The work done so far, for the main thread's progress report. */
  progress(done: number): void {
    Atomics.store(this.signal, PROGRESS, done);
  }

  /** Waits while more than `ahead` batches are posted and not yet received (bounds the memory they hold). */
  throttle(ahead: number): void {
    for (
      let taken = Atomics.load(this.signal, TAKEN);
      Atomics.load(this.signal, POSTED) - taken > ahead;
      taken = Atomics.load(this.signal, TAKEN)
    ) {
      Atomics.wait(this.signal, TAKEN, taken, 100);
    }
  }

  fail(e: unknown): void {
    this.send({ error: e instanceof Error ? e.message : String(e) }, []);
  }

  finish(): void {
    Atomics.store(this.signal, DONE, 1);
    Atomics.notify(this.signal, POSTED);
  }

  private send(message: Message<T>, transfer: ArrayBuffer[]): void {
    this.data.port.postMessage(message, transfer);
    Atomics.add(this.signal, POSTED, 1);
    Atomics.notify(this.signal, POSTED);
  }
}

/**
 * In a worker thread: opens the store the main thread reads, runs `task` with the task's data and a
 * channel, and always finishes (a failure is posted, never thrown).
 */
export function runPoolWorker<D extends PoolWorkerData, T>(task: (store: StoreReader, data: D, channel: PoolChannel<T>) => void): void {
  const data = workerData as D;
  const channel = new PoolChannel<T>(data);
  try {
    const store = openSharedReader(data.share);
    try {
      task(store, data, channel);
    } finally {
      store.close();
    }
  } catch (e) {
    channel.fail(e);
  } finally {
    channel.finish();
  }
}
