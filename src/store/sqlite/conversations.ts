import type BetterSqlite3 from 'better-sqlite3';
import { parseConversationMeta, type ConversationMeta } from '../conversation-meta.js';
import type { Notices } from '../notices.js';

/**
 * The conversation catalog (`SqliteConversationStore`'s `conversations` table, which may share the file
 * with the step store), read by the columns it needs: `id` and `metadata` (the `messages` column after
 * them is never read). A file without the table has no catalog; a table without those columns is not
 * upstream's, said once in a notice.
 */
/** Up to this many ids are looked up one by one (a hit page's conversations); more read the table once (a listing). */
const BY_ID = 64;

export class ConversationCatalog {
  private present: boolean | null = null;
  private byId: BetterSqlite3.Statement | null = null;

  constructor(
    private readonly db: BetterSqlite3.Database,
    private readonly notices: Notices,
  ) {}

  private readable(): boolean {
    if (this.present === null) {
      const cols = new Set((this.db.prepare('PRAGMA table_info(conversations)').all() as Array<{ name: string }>).map((c) => c.name));
      this.present = cols.has('id') && cols.has('metadata');
      if (!this.present && cols.size > 0)
        this.notices.add('unreadable-conversation-metadata', null, null, 'the conversations table has no id and metadata columns');
    }
    return this.present;
  }

  /** Metadata by conversation id, of `ids` (null: every row); rows that cannot be read are left out with a notice. */
  read(ids: readonly string[] | null): Map<string, ConversationMeta> {
    const out = new Map<string, ConversationMeta>();
    if (!this.readable()) return out;
    const wanted = ids === null ? null : new Set(ids);
    let rows: Array<{ id: unknown; metadata: unknown }>;
    if (wanted !== null && wanted.size <= BY_ID) {
      this.byId ??= this.db.prepare('SELECT id, metadata FROM conversations WHERE id = ?');
      rows = [...wanted].flatMap((id) => this.byId!.all(id) as typeof rows);
    } else {
      // many ids: one pass over the table is cheaper than as many lookups; the others are passed over
      rows = (this.db.prepare('SELECT id, metadata FROM conversations').all() as typeof rows).filter(
        (r) => wanted === null || (typeof r.id === 'string' && wanted.has(r.id)),
      );
    }
    for (const r of rows) {
      if (typeof r.id !== 'string') {
        this.notices.add('unreadable-conversation-metadata', null, null, `a row whose id is ${r.id === null ? 'NULL' : 'not text'}`);
        continue;
      }
      const meta = parseConversationMeta(r.metadata);
      if ('problem' in meta) this.notices.add('unreadable-conversation-metadata', null, null, `conversation ${r.id}: ${meta.problem}`);
      else out.set(r.id, meta);
    }
    return out;
  }
}
