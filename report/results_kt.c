/* results_kt: a Kernel Tuner cache file read back by `kvx import`
 * (results_kt_csv), turned into the reference CSV its importer takes, and
 * the one table of Kernel Tuner's error names beside kvx's statuses that
 * both directions use (results_kt_error: run/search_kt.c writes the file).
 *
 * The file is what Kernel Tuner 1.5 writes (its util module:
 * process_cache, store_cache, close_cache): device_name, kernel_name,
 * tune_params_keys, tune_params, objective, and `cache`, an entry per
 * configuration with each tune parameter's value, time (ms, the mean of
 * times), times (the benchmark's iterations, ms), compile_time and the
 * other costs, any user metric, or an error name in place of a value.  A
 * file left open by an interrupted tuning (no closing brackets, perhaps a
 * trailing comma) is read as Kernel Tuner reads it (correct_open_cache).
 *
 * The mapping: an entry is a row; its tune parameters are the axes
 * (tune_params_keys' order); mean_ms is its time, median_ms the median of
 * times (its time where times is absent or empty), min_ms, max_ms and
 * stdev_ms (over n - 1, as kvx's) of times; gbs its "GB/s"; an entry with an
 * error name in any field has the status of kt_errors below and no values.
 * The other fields (the costs, timestamps, other metrics) have no column:
 * their names go to ImportOpts.left.  The JSON is read with SQLite's JSON
 * functions (store_kt_rows), which name no position; each error names the
 * entry. */
#include "results_core.h"

#include "core/num.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Kernel Tuner's error names (util.py's ErrorConfig classes) and kvx's
 * statuses: import reads each name as its status; export writes a status as
 * the first name that has it, any other failure as RuntimeFailedConfig. */
static const struct {
    const char *error, *status;
} kt_errors[] = {
    {"InvalidConfig", "skipped"},                 /* restrictions, or the device's limits */
    {"CompilationFailedConfig", "compile_error"},
    {"RuntimeFailedConfig", "launch_error"},
    {"ErrorConfig", "launch_error"},              /* the base class: an error of no kind */
};
#define NKT_ERRORS ((int)(sizeof kt_errors / sizeof kt_errors[0]))

const char *results_kt_error(const char *status)
{
    if (!status || !strcmp(status, "ok"))
        return NULL;
    for (int i = 0; i < NKT_ERRORS; i++)
        if (!strcmp(status, kt_errors[i].status))
            return kt_errors[i].error;
    return "RuntimeFailedConfig";
}

static const char *kt_status(const char *error)
{
    for (int i = 0; error && i < NKT_ERRORS; i++)
        if (!strcmp(error, kt_errors[i].error))
            return kt_errors[i].status;
    return NULL;
}

/* "InvalidConfig, ...": kt_errors' names, for messages (in a). */
static const char *errors_list(Arena *a)
{
    StrBuf b;
    sb_init(&b);
    for (int i = 0; i < NKT_ERRORS; i++)
        sb_printf(&b, "%s%s", i ? ", " : "", kt_errors[i].error);
    const char *out = arena_strdup(a, sb_str(&b));
    sb_free(&b);
    return out;
}

int results_kt_is(const char *text)
{
    const char *p = text + strspn(text, " \t\r\n");
    return *p == '{' && strstr(p, "\"tune_params_keys\"") && strstr(p, "\"cache\"");
}

/* One entry under way. */
typedef struct KtEntry {
    int64_t id;
    const char *key;
    const char **val;          /* by tune parameter: its text, or NULL */
    double time;               /* ms; NaN: none */
    double *times;             /* ms */
    int ntimes, cap;
    double gbs;                /* NaN: none */
    const char *status;        /* an error's, or NULL */
} KtEntry;

/* The read. */
typedef struct KtRead {
    Arena *a;
    const char *path;
    const char **keys;         /* tune_params_keys */
    int nkeys;
    StrBuf csv;
    StrBuf *left;              /* the fields kvx stores nowhere, comma-separated; or NULL */
    const char **lnames;
    int nleft, capleft;
    KtEntry e;
    const char **seen;         /* by entry: its tune parameters' values, normalised */
    const char **seen_key;     /* by entry: its key */
    int nentries, capentries;
    HashIdx dup;
    StrBuf norm;
} KtRead;

static int is_ident(const char *s)
{
    if (!isalpha((unsigned char)*s) && *s != '_')
        return 0;
    for (s++; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_')
            return 0;
    return 1;
}

/* json as Kernel Tuner reads a file that is no valid JSON: where it does
 * not end in "}\n}" or "}}}", a trailing comma dropped and "}\n}" added (a
 * file an interrupted tuning left open); NULL where it does end so. */
static const char *kt_closed(const char *json, Arena *a)
{
    size_t n = strlen(json);
    while (n && isspace((unsigned char)json[n - 1]))
        n--;
    if (n >= 3 && (!memcmp(json + n - 3, "}\n}", 3) || !memcmp(json + n - 3, "}}}", 3)))
        return NULL;
    if (n && json[n - 1] == ',')
        n--;
    return arena_printf(a, "%.*s}\n}", (int)n, json);
}

/* The head of the file: valid JSON (as it is, or closed by kt_closed: *json
 * then the closed text), tune_params_keys an array and cache an object;
 * *gpu its device_name.  0 or -1 with err. */
static int kt_head(KtRead *r, Store *db, const char **json, const char **gpu, KvxError *err)
{
    for (int pass = 0; pass < 2; pass++) {
        StoreRows *st = store_kt_rows(db, STORE_KT_HEAD, *json, err);
        int row = st ? store_rows_next(st, "reading a Kernel Tuner cache", err) : -1;
        if (row > 0 && store_rows_int(st, 0)) {
            const char *dev = store_rows_text(st, 1), *keys = store_rows_text(st, 3), *cache = store_rows_text(st, 4);
            *gpu = dev && *dev ? arena_strdup(r->a, dev) : NULL;
            int ok = keys && !strcmp(keys, "array") && cache && !strcmp(cache, "object");
            if (!ok)
                kvx_error_set(err, KVX_EINPUT, NULL, "%s: a Kernel Tuner cache file needs tune_params_keys"
                              " (an array of the tune parameters' names) and cache (an object of entries)",
                              r->path);
            store_rows_close(st);
            return ok ? 0 : -1;
        }
        store_rows_close(st);
        if (row < 0)
            return -1;
        const char *closed = pass == 0 ? kt_closed(*json, r->a) : NULL;
        if (!closed)
            break;
        *json = closed;
    }
    kvx_error_set(err, KVX_EINPUT, NULL, "%s: malformed JSON (expected a Kernel Tuner cache file, closed"
                  " or left open by an interrupted tuning)", r->path);
    return -1;
}

/* tune_params_keys: identifiers, none a column an import reads, each once;
 * the CSV's header written.  0 or -1 with err. */
static int kt_keys(KtRead *r, Store *db, const char *json, KvxError *err)
{
    StoreRows *st = store_kt_rows(db, STORE_KT_KEYS, json, err);
    int rc, cap = 0;
    while (st && (rc = store_rows_next(st, "reading a Kernel Tuner cache", err)) > 0) {
        const char *type = store_rows_text(st, 0), *name = store_rows_text(st, 1);
        const char *why = strcmp(type, "text") ? "is not a string"
                        : !is_ident(name) ? "is not an identifier ([A-Za-z_][A-Za-z0-9_]*), as kvx's axes are"
                        : results_import_column(name) ? "is the name of a value column of kvx import" : NULL;
        for (int k = 0; !why && k < r->nkeys; k++)
            if (!strcmp(r->keys[k], name))
                why = "appears twice";
        if (why) {
            kvx_error_set(err, KVX_EINPUT, NULL, "%s: tune parameter %d of tune_params_keys ('%s') %s",
                          r->path, r->nkeys + 1, name ? name : "", why);
            break;
        }
        if (r->nkeys == cap)
            r->keys = mem_realloc(r->keys, sizeof *r->keys * (size_t)(cap = cap ? 2 * cap : 8));
        r->keys[r->nkeys++] = arena_strdup(r->a, name);
        sb_printf(&r->csv, "%s\"%s\"", r->nkeys > 1 ? "," : "", name);
    }
    store_rows_close(st);
    if (!err->code && r->nkeys == 0)
        kvx_error_set(err, KVX_EINPUT, NULL, "%s: tune_params_keys is empty (expected the tune parameters'"
                      " names: kvx's axes)", r->path);
    sb_puts(&r->csv, ",median_ms,mean_ms,min_ms,max_ms,stdev_ms,gbs,status\n");
    return err->code ? -1 : 0;
}

/* A field's name among those that have no column, once. */
static void left_add(KtRead *r, const char *name)
{
    for (int i = 0; i < r->nleft; i++)
        if (!strcmp(r->lnames[i], name))
            return;
    if (r->nleft == r->capleft)
        r->lnames = mem_realloc(r->lnames, sizeof *r->lnames * (size_t)(r->capleft = r->capleft ? 2 * r->capleft : 16));
    r->lnames[r->nleft++] = arena_strdup(r->a, name);
}

/* A number of ms or GB/s: finite, from 0.  0 or -1 with err. */
static int kt_number(KtRead *r, const StoreRows *st, int col, const char *what, double *out, KvxError *err)
{
    StoreType t = store_rows_type(st, col);
    double d = store_rows_double(st, col);
    if ((t == STORE_INT || t == STORE_REAL) && isfinite(d) && d >= 0) {
        *out = d;
        return 0;
    }
    kvx_error_set(err, KVX_EINPUT, NULL, "%s: cache entry '%s': %s is %s%s%s (expected a finite number from 0)",
                  r->path, r->e.key, what, t == STORE_TEXT ? "'" : "",
                  t == STORE_NULL ? "null" : store_rows_text(st, col), t == STORE_TEXT ? "'" : "");
    return -1;
}

/* A tune parameter's value: a number or a string as it is, a boolean as
 * JSON spells it.  0 or -1 with err. */
static int kt_param(KtRead *r, int k, const char *type, const char *text, KvxError *err)
{
    if (!strcmp(type, "integer") || !strcmp(type, "real") || !strcmp(type, "text"))
        r->e.val[k] = arena_strdup(r->a, text ? text : "");
    else if (!strcmp(type, "true") || !strcmp(type, "false"))
        r->e.val[k] = type;
    else
        kvx_error_set(err, KVX_EINPUT, NULL, "%s: cache entry '%s': tune parameter '%s' is %s (expected a"
                      " number or a string)", r->path, r->e.key, r->keys[k],
                      !strcmp(type, "null") ? "null" : !strcmp(type, "array") ? "an array" : "an object");
    return err->code ? -1 : 0;
}

/* One row of STORE_KT_FIELDS into the entry under way.  0 or -1 with err. */
static int kt_field(KtRead *r, const StoreRows *st, KvxError *err)
{
    const char *name = store_rows_text(st, STORE_KT_FIELD), *type = store_rows_text(st, STORE_KT_FIELD_TYPE);
    const char *text = store_rows_text(st, STORE_KT_FIELD_TEXT);
    KtEntry *e = &r->e;
    if (!name)
        return 0;          /* an entry that is no object: kt_entry_end says so */
    const char *status = !strcmp(type, "text") ? kt_status(text) : NULL;
    if (status)
        e->status = status;
    for (int k = 0; k < r->nkeys; k++)
        if (!strcmp(name, r->keys[k]))
            return kt_param(r, k, type, text, err);
    if (status)
        return 0;
    if (!strcmp(name, "time") && !strcmp(type, "text")) {
        kvx_error_set(err, KVX_EINPUT, NULL, "%s: cache entry '%s': time is '%s' (expected ms, or one of"
                      " Kernel Tuner's errors: %s)", r->path, e->key, text, errors_list(r->a));
        return -1;
    }
    if (!strcmp(name, "time"))
        return kt_number(r, st, STORE_KT_FIELD_TEXT, "time", &e->time, err);
    if (!strcmp(name, "GB/s"))
        return kt_number(r, st, STORE_KT_FIELD_TEXT, "GB/s", &e->gbs, err);
    if (strcmp(name, "times")) {
        left_add(r, name);
        return 0;
    }
    if (strcmp(type, "array")) {
        kvx_error_set(err, KVX_EINPUT, NULL, "%s: cache entry '%s': times is not an array (expected the"
                      " benchmark's times, ms)", r->path, e->key);
        return -1;
    }
    if (store_rows_type(st, STORE_KT_ELEM_TYPE) == STORE_NULL)
        return 0;          /* times: [] */
    if (e->ntimes == e->cap)
        e->times = mem_realloc(e->times, sizeof *e->times * (size_t)(e->cap = e->cap ? 2 * e->cap : 32));
    return kt_number(r, st, STORE_KT_ELEM, "an element of times", &e->times[e->ntimes++], err);
}

static void csv_num(StrBuf *b, double v)
{
    char buf[40] = "";
    if (isfinite(v))
        num_write_double(buf, sizeof buf, v, NUM_SHORTEST);
    sb_printf(b, ",%s", buf);
}

static void csv_quoted(StrBuf *b, const char *s, int first)
{
    sb_puts(b, first ? "\"" : ",\"");
    for (; *s; s++) {
        if (*s == '"')
            sb_putc(b, '"');
        sb_putc(b, *s);
    }
    sb_putc(b, '"');
}

/* The entry's row: its tune parameters, then its values from time and times
 * (none for a failed one), its status. */
static void entry_row(KtRead *r)
{
    KtEntry *e = &r->e;
    for (int k = 0; k < r->nkeys; k++)
        csv_quoted(&r->csv, e->val[k], k == 0);
    double med = NAN, lo = NAN, hi = NAN, sd = NAN, mean = e->status ? NAN : e->time;
    if (!e->status && e->ntimes > 0) {
        double sum = 0, ss = 0;
        for (int i = 0; i < e->ntimes; i++)
            sum += e->times[i];
        for (int i = 0; i < e->ntimes; i++)
            ss += (e->times[i] - sum / e->ntimes) * (e->times[i] - sum / e->ntimes);
        sd = e->ntimes > 1 ? sqrt(ss / (e->ntimes - 1)) : NAN;
        med = results_median(e->times, e->ntimes);        /* sorts times */
        lo = e->times[0], hi = e->times[e->ntimes - 1];
    } else if (!e->status) {
        med = e->time;
    }
    csv_num(&r->csv, med);
    csv_num(&r->csv, mean);
    csv_num(&r->csv, lo);
    csv_num(&r->csv, hi);
    csv_num(&r->csv, sd);
    csv_num(&r->csv, e->status ? NAN : e->gbs);
    sb_printf(&r->csv, ",%s\n", e->status ? e->status : "ok");
}

static int same_values(int stored, const void *ctx)
{
    const KtRead *r = ctx;
    return !strcmp(r->seen[stored], sb_str(&r->norm));
}

/* The entry's tune parameter values as the importer compares them (a
 * number by its value), once in the file.  0 or -1 with err. */
static int entry_once(KtRead *r)
{
    KtEntry *e = &r->e;
    sb_reset(&r->norm);
    for (int k = 0; k < r->nkeys; k++) {
        double d;
        char buf[40];
        if (num_read_double(e->val[k], &d) == 0)
            num_write_double(buf, sizeof buf, d, NUM_G15);
        sb_printf(&r->norm, "%s%s", k ? "\x1f" : "", num_read_double(e->val[k], &d) == 0 ? buf : e->val[k]);
    }
    if (r->nentries == r->capentries) {
        r->capentries = r->capentries ? 2 * r->capentries : 64;
        r->seen = mem_realloc(r->seen, sizeof *r->seen * (size_t)r->capentries);
        r->seen_key = mem_realloc(r->seen_key, sizeof *r->seen_key * (size_t)r->capentries);
    }
    r->seen[r->nentries] = arena_strdup(r->a, sb_str(&r->norm));
    r->seen_key[r->nentries] = e->key;
    int j = hidx_add(&r->dup, hidx_hash(r->norm.p, r->norm.len), r->nentries, same_values, r);
    if (j < 0) {
        r->nentries++;
        return 0;
    }
    return -1 - j;
}

/* The entry under way, checked and written.  0 or -1 with err. */
static int entry_end(KtRead *r, int is_object, KvxError *err)
{
    KtEntry *e = &r->e;
    const char *missing = NULL;
    for (int k = 0; k < r->nkeys && !missing; k++)
        missing = e->val[k] ? NULL : r->keys[k];
    int dup = is_object && !missing ? entry_once(r) : 0;
    if (!is_object)
        kvx_error_set(err, KVX_EINPUT, NULL, "%s: cache entry '%s' is not an object (expected a"
                      " configuration's fields)", r->path, e->key);
    else if (missing)
        kvx_error_set(err, KVX_EINPUT, NULL, "%s: cache entry '%s' has no tune parameter '%s'", r->path, e->key,
                      missing);
    else if (dup < 0)
        kvx_error_set(err, KVX_EINPUT, NULL, "%s: cache entries '%s' and '%s' hold the same tune parameter"
                      " values", r->path, r->seen_key[-1 - dup], e->key);
    else if (!e->status && isnan(e->time))
        kvx_error_set(err, KVX_EINPUT, NULL, "%s: cache entry '%s' has no time (expected ms, or one of"
                      " Kernel Tuner's errors: %s)", r->path, e->key, errors_list(r->a));
    else
        entry_row(r);
    return err->code ? -1 : 0;
}

/* A new entry under way at the row st is on. */
static void entry_start(KtRead *r, const StoreRows *st)
{
    KtEntry *e = &r->e;
    double *times = e->times;
    int cap = e->cap;
    memset(e, 0, sizeof *e);
    e->times = times, e->cap = cap;
    e->id = store_rows_int(st, STORE_KT_ENTRY_ID);
    e->key = arena_strdup(r->a, store_rows_text(st, STORE_KT_ENTRY) ? store_rows_text(st, STORE_KT_ENTRY) : "");
    e->val = arena_alloc(r->a, sizeof *e->val * (size_t)r->nkeys);
    memset(e->val, 0, sizeof *e->val * (size_t)r->nkeys);
    e->time = e->gbs = NAN;
}

/* Every entry of cache, a row each.  0 or -1 with err. */
static int kt_entries(KtRead *r, Store *db, const char *json, KvxError *err)
{
    StoreRows *st = store_kt_rows(db, STORE_KT_FIELDS, json, err);
    int row = st ? 1 : -1, open = 0, is_object = 0;
    while (st && (row = store_rows_next(st, "reading a Kernel Tuner cache", err)) > 0) {
        if (!open || store_rows_int(st, STORE_KT_ENTRY_ID) != r->e.id) {
            if (open && entry_end(r, is_object, err))
                break;
            entry_start(r, st);
            open = 1;
            is_object = !strcmp(store_rows_text(st, STORE_KT_ENTRY_TYPE), "object");
        }
        if (kt_field(r, st, err))
            break;
    }
    if (open && !err->code)
        entry_end(r, is_object, err);
    store_rows_close(st);
    if (!err->code && !open)
        kvx_error_set(err, KVX_EINPUT, NULL, "%s: the Kernel Tuner cache holds no entry", r->path);
    return err->code || row < 0 ? -1 : 0;
}

char *results_kt_csv(Store *db, const char *json, const char *path, Arena *a, const char **gpu, StrBuf *left,
                     KvxError *err)
{
    KtRead r = {.a = a, .path = path, .left = left};
    char *out = NULL;
    sb_init(&r.csv);
    sb_init(&r.norm);
    if (kt_head(&r, db, &json, gpu, err) == 0 && kt_keys(&r, db, json, err) == 0 &&
        kt_entries(&r, db, json, err) == 0) {
        out = sb_take(&r.csv);
        for (int i = 0; left && i < r.nleft; i++)
            sb_printf(left, "%s%s", i ? ", " : "", r.lnames[i]);
    }
    sb_free(&r.csv);
    sb_free(&r.norm);
    hidx_free(&r.dup);
    free(r.keys), free(r.lnames), free(r.seen), free(r.seen_key), free(r.e.times);
    return out;
}
