p='src/store/open.ts'
s=open(p).read()
def rep(a,b,cnt=1):
    global s
    assert s.count(a)==cnt, (a[:60], s.count(a))
    s=s.replace(a,b)
rep('''  readonly mode: OpenMode;
  /**
   * False when''','''  readonly mode: OpenMode;
  /**
   * A URI another thread can open to read exactly the same bytes (`openSharedStore`), or null when
   * reading in place next to a live writer: another connection would see another commit.
   */
  readonly sharedUri: string | null;
  /**
   * False when''')
rep('''interface Opened {
  readonly db: BetterSqlite3.Database;
  readonly schema: StoreSchema;
  readonly mode: OpenMode;''','''interface Opened {
  readonly db: BetterSqlite3.Database;
  readonly schema: StoreSchema;
  readonly mode: OpenMode;
  readonly sharedUri: string | null;''')
rep('''  let unchanged = (): boolean => true;
  try {''','''  let unchanged = (): boolean => true;
  let sharedUri: string | null = null;
  try {''')
rep('''      mode = 'immutable';
      db = new Database(fileUri(realPath, 'mode=ro&immutable=1'), { readonly: true, fileMustExist: true });''','''      mode = 'immutable';
      sharedUri = fileUri(realPath, 'mode=ro&immutable=1');
      db = new Database(sharedUri, { readonly: true, fileMustExist: true });''')
rep('''      db = withWal
        ? new Database(fileUri(copy, 'mode=ro'), { readonly: true, fileMustExist: true })
        : new Database(fileUri(copy, 'mode=ro&immutable=1'), { readonly: true, fileMustExist: true });''','''      sharedUri = fileUri(copy, withWal ? 'mode=ro' : 'mode=ro&immutable=1');
      db = new Database(sharedUri, { readonly: true, fileMustExist: true });''')
rep('''    return { db, schema: probeSchema(db, inputPath), mode, cleanup, unchanged };''','''    return { db, schema: probeSchema(db, inputPath), mode, sharedUri, cleanup, unchanged };''')
rep('''  const { db, schema, mode, cleanup, unchanged } = opened;
  let closed = false;
  return {
    path: inputPath,
    realPath,
    db,
    schema,
    mode,
    unchanged,''','''  const { db, schema, mode, sharedUri, cleanup, unchanged } = opened;
  let closed = false;
  return {
    path: inputPath,
    realPath,
    db,
    schema,
    mode,
    sharedUri,
    unchanged,''')
s += '''
/**
 * Opens, in another thread, the bytes a store opened with `openStore` reads (its `sharedUri`). The
 * opening thread owns the files: it checks `unchanged()` and removes a private copy when it is done.
 */
export function openSharedStore(uri: string, inputPath: string, realPath: string, mode: OpenMode): Store {
  const db = new Database(uri, { readonly: true, fileMustExist: true });
  try {
    db.exec('BEGIN');
    const schema = probeSchema(db, inputPath);
    return { path: inputPath, realPath, db, schema, mode, sharedUri: uri, unchanged: () => true, close: () => db.close() };
  } catch (e) {
    db.close();
    throw e;
  }
}
'''
open(p,'w').write(s)
