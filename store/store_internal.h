/* store_internal: what the store's files share and no other stage sees. */
#ifndef KVX_STORE_INTERNAL_H
#define KVX_STORE_INTERNAL_H

#include "store.h"

/* The SQLite handle of s (its statements are the store's own). */
struct sqlite3 *store_db(Store *s);
/* A Store over db, opened elsewhere (read-only: no statements prepared);
 * store_close closes db. */
Store *store_wrap(struct sqlite3 *db, const char *path);

/* path as a file: URI (its special characters escaped, an absolute path
 * after an empty authority) with query appended ("" for none): a path stays
 * a path when SQLite reads URIs.  ":memory:" stays itself.  malloc'd. */
char *store_uri(const char *path, const char *query);
/* The URI a reader opens path by: read-only, immutable (nothing created
 * beside the file, readable where nothing may be written) unless a -wal
 * shows a writer at work, whose log only a locking reader may read. */
char *store_read_uri(const char *path);

/* 1 when the file's table has the column, 0 when not, -1 on error. */
int store_column_exists(Store *s, const char *table, const char *column);

/* err = "PATH: what: SQLite's message" (KVX_EIO); returns -1. */
int store_fail(Store *s, KvxError *err, const char *what);
/* Run sql (several statements may follow one another).  0 or -1 with err. */
int store_exec(Store *s, const char *sql, KvxError *err);

#endif
