/**
 * Writes a realistic, deterministic demo store (the way pydantic-ai-harness StepPersistence +
 * SqliteStepStore would have written it) for trying convsearch:
 *
 *   node dist/scripts/make-demo-store.js <out.db> [--if-missing] [--force]
 *
 * `--if-missing` exits 0 without touching an existing file; otherwise an existing file is only
 * replaced with `--force`. The store is written to a temporary sibling and renamed into place; no
 * -wal/-shm files are left behind. Same input, same bytes: fixed timestamps and ids, no randomness.
 */

import { existsSync, realpathSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { pinRequest, simulateRun, textPart, thinkingPart, toolCallPart, utc, type SimResult } from './lib/messages.js';
import { pyFloat } from './lib/py-json.js';
import { derivedRunId } from './lib/run-ids.js';
import { StepStoreWriter, type ConversationInput } from './lib/store-writer.js';

export const DEMO_CONVERSATIONS = {
  ops: 'conv-ops-billing-api',
  payments: 'conv-payments-refunds',
  /** A run started without a conversation id gets a fresh UUID7 from pydantic-ai. */
  standalone: '019bb1f0-2c4d-7a8e-b5f6-0123456789ab',
  /** A run whose compactions leave repeats (receipts, a pin, kept user turns). */
  cache: 'conv-cache-eviction',
} as const;

/** Words that live in exactly one place of the demo store (handy for demos and tests). */
export const DEMO_MARKERS = {
  /** Only inside the 64+ KiB `fetch_logs` output of run-ops-1, which is externalized to the media table. */
  externalizedLog: 'ouroboroscache',
  /** Only in the interrupted snapshot of run-pay-2 (never in a complete snapshot: not searchable). */
  interruptedOnly: 'abandonedplan',
  /** Only in the compaction summary of run-ops-2 (a summary artifact: dropped by replay, not searchable). */
  summaryOnly: 'marmotsummary',
} as const;

/** Deterministic pseudo-random numbers (LCG) for the generated log. */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

function pad(n: number, w = 2): string {
  return String(n).padStart(w, '0');
}

/** A ~70 KiB container log ending in an OOM; the only place `ouroboroscache` appears. */
export function billingApiLog(): string {
  const rnd = lcg(20260112);
  const lines: string[] = [];
  const endpoints = ['GET /v1/invoices/INV-', 'GET /v1/customers/CUS-', 'POST /v1/invoices/INV-', 'GET /v1/credit-notes/CN-'];
  let ms = (8 * 3600 + 44 * 60) * 1000;
  while (lines.join('\n').length < 68_000) {
    ms += 200 + Math.floor(rnd() * 1400);
    const h = Math.floor(ms / 3_600_000);
    const m = Math.floor(ms / 60_000) % 60;
    const s = Math.floor(ms / 1000) % 60;
    const frac = ms % 1000;
    const thread = 1 + Math.floor(rnd() * 12);
    const ep = endpoints[Math.floor(rnd() * endpoints.length)]!;
    const id = 100000 + Math.floor(rnd() * 900000);
    const status = rnd() < 0.97 ? 200 : 503;
    const took = 3 + Math.floor(rnd() * 180);
    const heap = 380 + Math.floor(rnd() * 380);
    lines.push(
      `2026-01-12T${pad(h)}:${pad(m)}:${pad(s)}.${pad(frac, 3)}Z INFO  [http-nio-8080-exec-${thread}] c.e.billing.web.RequestLog - ${ep}${id} ${status} ${took}ms heap_used=${heap}MiB`,
    );
  }
  lines.push(
    '2026-01-12T08:59:57.311Z INFO  [main] c.e.billing.cache.OuroborosCache - warming ouroboroscache for 1843200 invoice lines',
    '2026-01-12T08:59:59.870Z ERROR [main] o.s.boot.SpringApplication - Application run failed',
    'java.lang.OutOfMemoryError: Java heap space',
    '\tat java.base/java.util.HashMap.resize(HashMap.java:702)',
    '\tat java.base/java.util.HashMap.putVal(HashMap.java:661)',
    '\tat com.example.billing.cache.OuroborosCache.warm(OuroborosCache.java:88)',
    '\tat com.example.billing.BillingApplication.main(BillingApplication.java:31)',
    'Container billing-api terminated: OOMKilled (exit code 137)',
  );
  return lines.join('\n') + '\n';
}

const PAYMENTS_INSTRUCTIONS = 'You are a careful payments engineer. Never run destructive SQL without a dry run.';

/** The scripted runs of the demo store, in the order they are registered. */
export function demoRuns(): SimResult[] {
  const ops1 = simulateRun({
    runId: 'run-ops-1',
    conversationId: DEMO_CONVERSATIONS.ops,
    startedAt: utc('2026-01-12T09:02:11.482913Z'),
    systemPrompt: 'You are the on-call assistant for the platform team. Prefer read-only commands.',
    instructions: 'Answer concisely and cite the command output you relied on.',
    prompt: 'The billing-api deploy to prod-eu is stuck at 2/5 replicas. Can you find out why?',
    steps: [
      {
        parts: [
          textPart('Let me check the rollout status first.'),
          toolCallPart('run_shell', { cmd: 'kubectl -n billing rollout status deploy/billing-api --timeout=10s' }, 'call_ops1_1'),
        ],
        usage: { inputTokens: 211, outputTokens: 38 },
        results: [
          {
            content:
              'Waiting for deployment "billing-api" rollout to finish: 2 of 5 updated replicas are available...\nerror: timed out waiting for the condition',
          },
        ],
      },
      {
        parts: [toolCallPart('get_pod_events', '{"namespace": "billing", "selector": "app=billing-api"}', 'call_ops1_2')],
        usage: { inputTokens: 268, outputTokens: 24 },
        results: [
          {
            retry: [
              {
                type: 'missing',
                loc: ['since'],
                msg: 'Field required',
                input: { namespace: 'billing', selector: 'app=billing-api' },
              },
            ],
          },
        ],
      },
      {
        parts: [toolCallPart('get_pod_events', { namespace: 'billing', selector: 'app=billing-api', since: '15m' }, 'call_ops1_3')],
        usage: { inputTokens: 322, outputTokens: 29 },
        results: [
          {
            content: {
              pod: 'billing-api-7d9f8c6b5-x2x9q',
              image: 'registry.example.com/billing-api:2.5.0',
              reason: 'OOMKilled',
              exit_code: 137,
              restarts: 7,
              ready: false,
              node: null,
              memory_limit_gib: 0.5,
              memory_request_gib: pyFloat(1),
              cpu_throttle_ratio: 0.25,
              ready_ratio: 0.4,
            },
          },
        ],
      },
      {
        parts: [toolCallPart('fetch_logs', { pod: 'billing-api-7d9f8c6b5-x2x9q', container: 'billing-api', tail: 1200 }, 'call_ops1_4')],
        usage: { inputTokens: 401, outputTokens: 31 },
        results: [{ content: billingApiLog() }],
      },
      {
        parts: [
          thinkingPart(
            'The pod is OOMKilled with exit code 137 and the JVM dies with a heap OutOfMemoryError while the cache warms up. 2.5.0 raised -Xmx to 768m but the limit is still 512Mi.',
          ),
          textPart(
            'The new billing-api 2.5.0 pods are OOMKilled (exit code 137, 7 restarts): the JVM starts with -Xmx768m but the container memory limit is 512Mi, and the log ends in java.lang.OutOfMemoryError: Java heap space during cache warm-up. Raise the limit to 1Gi (or lower -Xmx to 384m) and the rollout will complete.',
          ),
        ],
        usage: { inputTokens: 17342, outputTokens: 96 },
      },
    ],
  });

  const pay1 = simulateRun({
    runId: 'run-pay-1',
    conversationId: DEMO_CONVERSATIONS.payments,
    startedAt: utc('2026-01-12T10:15:42.250000Z'),
    instructions: PAYMENTS_INSTRUCTIONS,
    prompt: 'Support says customer 48213 was refunded twice for order ORD-2291. Why did that happen?',
    steps: [
      {
        parts: [
          toolCallPart(
            'query_db',
            { sql: "SELECT id, amount, currency, created_at, idempotency_key, webhook_attempt FROM refunds WHERE order_id = 'ORD-2291'" },
            'call_pay1_1',
          ),
        ],
        usage: { inputTokens: 142, outputTokens: 41 },
        results: [
          {
            content: [
              {
                id: 'rf_9Kq2',
                amount: 49.99,
                currency: 'EUR',
                created_at: '2026-01-11T17:42:03Z',
                idempotency_key: null,
                webhook_attempt: 1,
              },
              {
                id: 'rf_9Kq7',
                amount: 49.99,
                currency: 'EUR',
                created_at: '2026-01-11T17:42:34Z',
                idempotency_key: null,
                webhook_attempt: 2,
              },
            ],
          },
        ],
      },
      {
        parts: [toolCallPart('read_file', { path: 'services/payments/refunds.py' }, 'call_pay1_2')],
        usage: { inputTokens: 233, outputTokens: 19 },
        results: [
          {
            content:
              'def handle_refund_webhook(event):\n    order = orders.get(event.data["order_id"])\n    # no Idempotency-Key: a retried delivery creates a second refund\n    return gateway.refunds.create(amount=order.total, currency=order.currency)\n',
          },
        ],
      },
      {
        parts: [
          textPart(
            'Both refunds come from two deliveries of the same refund webhook (attempts 1 and 2, 31 s apart). handle_refund_webhook() calls the gateway without an Idempotency-Key, so the retried delivery created a second refund. Deriving the idempotency key from the webhook event id makes retries safe.',
          ),
        ],
        usage: { inputTokens: 318, outputTokens: 72 },
      },
    ],
  });

  const ops2 = simulateRun({
    runId: 'run-ops-2',
    conversationId: DEMO_CONVERSATIONS.ops,
    startedAt: utc('2026-01-12T10:41:05.007000Z'),
    instructions: 'Answer concisely and cite the command output you relied on.',
    history: ops1.messages,
    prompt: 'Raise the memory limit to 1Gi, redeploy billing-api and have the deploy verifier confirm the rollout.',
    steps: [
      {
        parts: [
          toolCallPart('run_shell', { cmd: 'kubectl -n billing set resources deploy/billing-api --limits=memory=1Gi' }, 'call_ops2_1'),
        ],
        usage: { inputTokens: 17468, outputTokens: 33 },
        results: [{ content: 'deployment.apps/billing-api resource requirements updated' }],
      },
      {
        compaction: {
          summary:
            'Incident marmotsummary: billing-api 2.5.0 in prod-eu was stuck at 2/5 replicas because the pods were OOMKilled (-Xmx768m above the 512Mi limit). The user asked to raise the limit to 1Gi; the limit was updated.',
          keepLast: 2,
        },
        parts: [
          toolCallPart(
            'delegate',
            { agent: 'deploy-verifier', task: 'Verify the billing-api rollout in prod-eu after the memory limit change.' },
            'call_ops2_2',
          ),
        ],
        usage: { inputTokens: 402, outputTokens: 40 },
        results: [{ content: 'deploy-verifier: 5/5 billing-api pods Ready, 0 restarts in 10 minutes, canary 5xx rate 0.02%.' }],
        // The delegated run executes inside this tool call.
        timing: { effectEnded: 75 },
      },
      {
        parts: [
          textPart(
            'billing-api now runs 5/5 replicas with a 1Gi memory limit, and the deploy verifier confirmed a healthy rollout (0 restarts, canary 5xx rate 0.02%).',
          ),
        ],
        usage: { inputTokens: 488, outputTokens: 45 },
      },
    ],
  });

  const delegateStarted = ops2.rows.find(
    (r) => r.table === 'events' && r.row.kind === 'tool_call_started' && r.row.toolName === 'delegate',
  );
  if (delegateStarted?.table !== 'events') throw new Error('delegate call not found');
  const verifierInner = '019bb1d2-6a4e-7c3f-8d21-5e9f0a1b2c3d';
  const verifier = simulateRun({
    // With agent_name set (and no explicit run_id), RunRecord.run_id is derived from the agent name and
    // ctx.run_id (`sp-…`, docs/backends.md), while messages carry ctx.run_id itself.
    runId: derivedRunId('deploy-verifier', verifierInner),
    messageRunId: verifierInner,
    conversationId: DEMO_CONVERSATIONS.ops,
    parentRunId: 'run-ops-2',
    agentName: 'deploy-verifier',
    metadata: { delegated_by: 'run-ops-2', tool_call_id: 'call_ops2_2' },
    startedAt: delegateStarted.row.timestamp + 1_000_000,
    instructions: 'Verify Kubernetes rollouts. Report pod readiness, restarts and the canary error rate.',
    prompt: 'Verify the billing-api rollout in prod-eu after the memory limit change.',
    steps: [
      {
        parts: [toolCallPart('run_shell', { cmd: 'kubectl -n billing get pods -l app=billing-api' }, 'call_dv_1')],
        usage: { inputTokens: 96, outputTokens: 22 },
        results: [
          {
            content: [
              'NAME                          READY   STATUS    RESTARTS   AGE',
              'billing-api-6c4b9d7f8-4lq2m   1/1     Running   0          9m12s',
              'billing-api-6c4b9d7f8-8tn5v   1/1     Running   0          9m40s',
              'billing-api-6c4b9d7f8-c7wxd   1/1     Running   0          10m3s',
              'billing-api-6c4b9d7f8-jp9rk   1/1     Running   0          10m31s',
              'billing-api-6c4b9d7f8-zb2hs   1/1     Running   0          10m58s',
            ].join('\n'),
          },
        ],
      },
      {
        parts: [
          toolCallPart(
            'query_metrics',
            {
              query:
                'sum(rate(http_requests_total{app="billing-api",track="canary",code=~"5.."}[10m])) / sum(rate(http_requests_total{app="billing-api",track="canary"}[10m]))',
            },
            'call_dv_2',
          ),
        ],
        usage: { inputTokens: 201, outputTokens: 64 },
        results: [{ content: { value: 0.0002, window: '10m', samples: 600, threshold: 0.01, healthy: true } }],
      },
      {
        parts: [textPart('Rollout verified: 5/5 pods Ready, 0 restarts in the last 10 minutes, canary 5xx rate 0.02% (threshold 1%).')],
        usage: { inputTokens: 262, outputTokens: 30 },
      },
    ],
  });

  const pay2 = simulateRun({
    runId: 'run-pay-2',
    conversationId: DEMO_CONVERSATIONS.payments,
    startedAt: utc('2026-01-12T11:20:18.640210Z'),
    instructions: PAYMENTS_INSTRUCTIONS,
    history: pay1.messages,
    prompt: 'Add an idempotency key derived from the webhook event id, plus a regression test for the double refund.',
    steps: [
      {
        parts: [
          toolCallPart(
            'write_file',
            {
              path: 'services/payments/refunds.py',
              content:
                'def handle_refund_webhook(event):\n    order = orders.get(event.data["order_id"])\n    return gateway.refunds.create(\n        amount=order.total,\n        currency=order.currency,\n        idempotency_key=f"refund:{event.id}",\n    )\n',
            },
            'call_pay2_1',
          ),
        ],
        usage: { inputTokens: 402, outputTokens: 88 },
        results: [{ content: 'wrote services/payments/refunds.py (7 lines)' }],
      },
      {
        parts: [toolCallPart('run_shell', { cmd: 'pytest tests/payments -q -k refund' }, 'call_pay2_2')],
        usage: { inputTokens: 517, outputTokens: 21 },
        results: [{ content: '......\n6 passed in 0.84s (test_retried_webhook_refunds_once included)' }],
      },
      {
        parts: [
          textPart(
            'Tests pass. Next, the abandonedplan: replay every refund webhook since 2025-01-01 so that old refunds get idempotency keys too.',
          ),
          toolCallPart('run_shell', { cmd: 'python scripts/replay_webhooks.py --since 2025-01-01 --all' }, 'call_pay2_3'),
        ],
        usage: { inputTokens: 569, outputTokens: 47 },
        results: [{ error: 'WorkerLost("replay worker killed after 900s: python scripts/replay_webhooks.py --since 2025-01-01 --all")' }],
      },
    ],
  });

  const pay3 = simulateRun({
    runId: 'run-pay-3',
    conversationId: DEMO_CONVERSATIONS.payments,
    startedAt: utc('2026-01-12T11:48:02.125000Z'),
    instructions: PAYMENTS_INSTRUCTIONS,
    prompt: 'The webhook replay was killed. Backfill idempotency keys only for refunds created since 2026-01-01 instead.',
    steps: [
      {
        parts: [
          toolCallPart(
            'query_db',
            {
              sql: "UPDATE refunds SET idempotency_key = 'refund:' || webhook_event_id WHERE idempotency_key IS NULL AND created_at >= '2026-01-01'",
              dry_run: false,
            },
            'call_pay3_1',
          ),
        ],
        usage: { inputTokens: 133, outputTokens: 52 },
        results: [{ content: { rows_updated: 1284, duration_s: 2.5, dry_run: false, warnings: [] } }],
      },
      {
        parts: [
          textPart(
            'Backfilled idempotency keys for 1284 refunds created since 2026-01-01. New refunds take the key from the webhook event id, so a retried delivery can no longer refund twice.',
          ),
        ],
        usage: { inputTokens: 201, outputTokens: 41 },
      },
    ],
  });

  const i18n = simulateRun({
    runId: 'run-i18n-1',
    conversationId: DEMO_CONVERSATIONS.standalone,
    startedAt: utc('2026-01-12T13:05:44.901000Z'),
    prompt: 'Kannst du prüfen, ob die Rückerstattung für Bestellung ORD-3310 doppelt gebucht wurde? Der Kunde schreibt aus Köln 🙂',
    steps: [
      {
        parts: [
          toolCallPart('query_db', { sql: "SELECT id, amount, currency, note FROM refunds WHERE order_id = 'ORD-3310'" }, 'call_i18n_1'),
        ],
        usage: { inputTokens: 88, outputTokens: 30 },
        results: [{ content: [{ id: 'rf_77aa', amount: 19.5, currency: 'EUR', note: 'Rückerstattung – einmalig ✓' }] }],
      },
      {
        parts: [
          textPart(
            'Nein: für ORD-3310 gibt es nur eine Rückerstattung über 19,50 €. 返金は1回だけ処理されました。 Возврат выполнен один раз. ✅',
          ),
        ],
        usage: { inputTokens: 131, outputTokens: 44 },
      },
    ],
  });

  // Two summarizing compactions with receipts, a pin and kept user turns: each leaves the snapshot
  // starting with messages the record does not end with, so the kept tail is indexed again (--collapse).
  const cachePin = pinRequest('Pinned: cite the cache eviction runbook (RB-12) before changing a cache policy.', {
    partTimestamp: utc('2026-01-12T14:10:02Z'),
  });
  const compaction = (summary: string) => ({ summary, keepLast: 2, receipt: true, reinjectPins: true, keepUserMessages: 1 });
  const cache = simulateRun({
    runId: 'run-cache-1',
    conversationId: DEMO_CONVERSATIONS.cache,
    agentName: 'cache-auditor',
    startedAt: utc('2026-01-12T14:10:00.000000Z'),
    history: [cachePin],
    prompt: 'Cache hits on the search cluster dropped this morning. Find out why and fix node 3.',
    steps: [
      {
        parts: [toolCallPart('read_metrics', { metric: 'cache_hit_ratio', cluster: 'search' }, 'call_cache_1')],
        usage: { inputTokens: 140, outputTokens: 24 },
        results: [{ content: 'cache_hit_ratio fell from 0.93 to 0.41 at 09:40, right after the eviction policy change' }],
      },
      {
        parts: [toolCallPart('run_shell', { cmd: 'cat /etc/cache/eviction.conf' }, 'call_cache_2')],
        usage: { inputTokens: 190, outputTokens: 18 },
        results: [{ content: 'policy = lfu\nmax_entries = 20000\nttl = 300' }],
      },
      {
        compaction: compaction('Cache hits fell after the eviction policy on node 3 changed from LRU to LFU.'),
        parts: [toolCallPart('run_shell', { cmd: 'grep evict /var/log/cache.log | tail -3' }, 'call_cache_3')],
        usage: { inputTokens: 230, outputTokens: 22 },
        results: [{ content: 'evicted 18200 entries in 60s (policy lfu)' }],
      },
      {
        parts: [toolCallPart('run_shell', { cmd: 'cachectl set-policy lru --node 3' }, 'call_cache_4')],
        usage: { inputTokens: 260, outputTokens: 20 },
        results: [{ content: 'policy set to lru on node 3' }],
      },
      {
        compaction: compaction('Node 3 evicted 18200 entries a minute under LFU; its policy is now LRU again.'),
        parts: [textPart('Node 3 runs the LRU eviction policy again (runbook RB-12, step 4) and its cache hit ratio is back to 0.92.')],
        usage: { inputTokens: 280, outputTokens: 35 },
      },
    ],
  });

  return [ops1, pay1, ops2, verifier, pay2, pay3, i18n, cache];
}

/**
 * The harness CLI's conversation catalog for the demo's conversations (docs/backends.md): titles, tags
 * and outcomes as its namer and session leave them. The run started without a conversation id has none.
 */
export function demoCatalog(): ConversationInput[] {
  const at = utc('2026-01-12T16:00:00Z');
  const row = (id: string, title: string, tags: string[], outcome: string, runId: string, messages: number): ConversationInput => ({
    id,
    updatedAt: at,
    summary: {
      title,
      tags,
      outcome,
      title_source: 'generated',
      naming_version: 1,
      named_revision: 1,
      run_id: runId,
      message_count: messages,
    },
  });
  return [
    row(DEMO_CONVERSATIONS.ops, 'Billing API stuck after OOM in prod-eu', ['billing', 'kubernetes', 'oom'], 'completed', 'run-ops-2', 14),
    row(
      DEMO_CONVERSATIONS.payments,
      'Double refund for order ORD-2291',
      ['payments', 'refunds', 'idempotency'],
      'cancelled',
      'run-pay-3',
      12,
    ),
    row(DEMO_CONVERSATIONS.cache, 'Search cache hit ratio drop on node 3', ['cache', 'search'], 'completed', 'run-cache-1', 16),
  ];
}

/** Writes the demo store to `path` (which must not exist). */
export function buildDemoStore(path: string): void {
  const writer = new StepStoreWriter(path);
  try {
    writer.writeSimulatedRuns(demoRuns());
    for (const c of demoCatalog()) writer.saveConversation(c);
  } finally {
    writer.close();
  }
}

const USAGE = 'usage: make-demo-store <out.db> [--if-missing] [--force]';

export function main(argv: string[]): number {
  let out: string | undefined;
  let ifMissing = false;
  let force = false;
  for (const a of argv) {
    if (a === '--if-missing') ifMissing = true;
    else if (a === '--force') force = true;
    else if (a === '-h' || a === '--help') {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    } else if (a.startsWith('-')) {
      process.stderr.write(`make-demo-store: unknown option ${a}\n${USAGE}\n`);
      return 2;
    } else if (out === undefined) out = a;
    else {
      process.stderr.write(`make-demo-store: unexpected argument ${a}\n${USAGE}\n`);
      return 2;
    }
  }
  if (out === undefined) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const target = resolve(out);
  if (existsSync(target)) {
    if (ifMissing) return 0;
    if (!force) {
      process.stderr.write(`make-demo-store: ${out} exists (use --force to replace it)\n`);
      return 1;
    }
  }
  const tmp = join(dirname(target), `.${basename(target)}.tmp-${process.pid}`);
  try {
    buildDemoStore(tmp);
    // A stale -wal next to the target would be replayed into the new file: remove it first.
    for (const p of [`${target}-wal`, `${target}-shm`, `${target}-journal`]) rmSync(p, { force: true });
    renameSync(tmp, target);
  } finally {
    for (const p of [tmp, `${tmp}-wal`, `${tmp}-shm`]) rmSync(p, { force: true });
  }
  process.stdout.write(`wrote ${out}\n`);
  return 0;
}

function isMain(): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  try {
    return import.meta.url === pathToFileURL(realpathSync(entry)).href;
  } catch {
    return false;
  }
}

if (isMain()) process.exitCode = main(process.argv.slice(2));
