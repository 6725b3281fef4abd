/**
 * A store of Chinese, Japanese (full- and half-width Katakana) and Korean conversations, written with the
 * project's store writer: what `--tokenizer cjk` is tested on.
 */
import { join } from 'node:path';
import { textResponse, userRequest, utc } from '../../scripts/lib/messages.js';
import { StepStoreWriter } from '../../scripts/lib/store-writer.js';
import { tempDir } from './stores.js';

const T0 = utc('2026-02-01T08:00:00Z');

/** Each run: a conversation of user/assistant turns, saved as one snapshot per turn pair. */
export const CJK_RUNS: ReadonlyArray<{ runId: string; conversationId: string; turns: ReadonlyArray<readonly [string, string]> }> = [
  {
    runId: 'run-zh',
    conversationId: 'conv-zh',
    turns: [
      ['我们的数据库连接池经常超时，怎么办？', '请检查连接池的最大连接数，并设置合理的超时时间。'],
      ['退款流程需要多久？', '退款一般在三个工作日内完成。'],
    ],
  },
  {
    runId: 'run-ja',
    conversationId: 'conv-ja',
    turns: [
      ['全文検索エンジンの設定を教えてください。', 'ﾃﾞｰﾀﾍﾞｰｽのｲﾝﾃﾞｯｸｽを再構築してから検索してください。'],
      ['データベースのバックアップは毎日ですか？', 'はい、データベースは毎晩バックアップします。データベース、データベース。'],
    ],
  },
  {
    runId: 'run-ko',
    conversationId: 'conv-ko',
    turns: [
      ['데이터베이스 연결이 자주 끊어집니다.', '데이터베이스를 다시 시작하고 연결 설정을 확인하세요.'],
      ['환불은 언제 되나요?', '환불은 영업일 기준 삼일 이내에 처리됩니다.'],
    ],
  },
];

export function buildCjkStore(path = join(tempDir('convsearch-cjk-'), 'cjk.db')): string {
  const w = new StepStoreWriter(path);
  try {
    let clock = T0;
    const tick = (): number => (clock += 1_000_000);
    for (const run of CJK_RUNS) {
      w.registerRun({ runId: run.runId, conversationId: run.conversationId, agentName: 'support', startedAt: tick() });
      const messages = [];
      let step = 0;
      for (const [q, a] of run.turns) {
        messages.push(userRequest(q, { timestamp: tick() }), textResponse(a, { timestamp: tick() }));
        w.saveSnapshot({ runId: run.runId, stepIndex: ++step, state: 'complete', timestamp: tick(), messages: [...messages] });
      }
    }
  } finally {
    w.close();
  }
  return path;
}
