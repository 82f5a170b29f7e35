/** The `code` of a better-sqlite3 `SqliteError` (e.g. `SQLITE_BUSY`), undefined for other errors. */
export function sqliteCode(error: unknown): unknown {
  return typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
}
