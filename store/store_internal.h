/* store_internal: what the store's files share and no other stage sees. */
#ifndef KVX_STORE_INTERNAL_H
#define KVX_STORE_INTERNAL_H

#include "store.h"

/* The SQLite handle of s (its statements are the store's own). */
struct sqlite3 *store_db(Store *s);
/* A Store over db, opened elsewhere (read-only: no statements prepared);
 * store_close closes db. */
Store *store_wrap(struct sqlite3 *db, const char *path);

/* err = "PATH: what: SQLite's message" (KVX_EIO); returns -1. */
int store_fail(Store *s, KvxError *err, const char *what);
/* Run sql (several statements may follow one another).  0 or -1 with err. */
int store_exec(Store *s, const char *sql, KvxError *err);

#endif
