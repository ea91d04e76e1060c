/* search_kt: a recorded space (search_db.h) in Kernel Tuner's cache-file
 * format, so that Kernel Tuner's strategies replay the same space in its
 * simulation mode (bench/kernel_tuner_replay.py) as `kvx replay` does:
 * search_kt_export (run.h), `kvx export --format kerneltuner`.  Numbers go
 * out as the store's text of them, strings as JSON strings; an entry's key
 * joins the same texts, which is what Python's str gives for the values
 * json.load reads back (ints, and floats of a short decimal such as 0.05). */
#include "search_db.h"
#include "core/json.h"
#include "core/num.h"
#include "store/store_search.h"

#include <math.h>
#include <string.h>

static int is_number(const char *t)
{
    double d;
    return num_read_double(t, &d) == 0;
}

static void put_value(StrBuf *b, const char *t)
{
    if (is_number(t))
        sb_puts(b, t);
    else
        json_put_str(b, t, JSON_BYTES);
}

static void header(const SearchRecord *r, const char *device, StrBuf *b)
{
    sb_puts(b, "{\n\"device_name\": ");
    json_put_str(b, device, JSON_BYTES);
    sb_puts(b, ",\n\"kernel_name\": ");
    json_put_str(b, r->spec, JSON_BYTES);
    sb_printf(b, ",\n\"problem_size\": [%d],\n\"tune_params_keys\": [", r->npoints);
    for (int a = 0; a < r->sp.naxes; a++) {
        sb_puts(b, a ? ", " : "");
        json_put_str(b, r->axis[a], JSON_BYTES);
    }
    sb_puts(b, "],\n\"tune_params\": {");
    for (int a = 0; a < r->sp.naxes; a++) {
        sb_puts(b, a ? ", " : "");
        json_put_str(b, r->axis[a], JSON_BYTES);
        sb_puts(b, ": [");
        for (int v = 0; v < r->nvals[a]; v++) {
            sb_puts(b, v ? ", " : "");
            put_value(b, r->text[a][v]);
        }
        sb_puts(b, "]");
    }
    sb_puts(b, "},\n\"objective\": \"time\",\n\"cache\": {");
}

static void entry(const SearchRecord *r, int c, StrBuf *b, StrBuf *key)
{
    const int *v = r->vals + (size_t)c * (size_t)r->sp.naxes;
    sb_reset(key);
    for (int a = 0; a < r->sp.naxes; a++)
        sb_printf(key, "%s%s", a ? "," : "", r->text[a][v[a]]);
    sb_puts(b, c ? ",\n" : "\n");
    json_put_str(b, sb_str(key), JSON_BYTES);
    sb_puts(b, ": {");
    for (int a = 0; a < r->sp.naxes; a++) {
        json_put_str(b, r->axis[a], JSON_BYTES);
        sb_puts(b, ": ");
        put_value(b, r->text[a][v[a]]);
        sb_puts(b, ", ");
    }
    if (isnan(r->y[c])) {
        sb_puts(b, "\"time\": \"RuntimeFailedConfig\", \"times\": []");
    } else {
        char t[32];
        num_write_double(t, sizeof t, exp(r->y[c]), NUM_SHORTEST);
        sb_printf(b, "\"time\": %s, \"times\": [%s]", t, t);
    }
    sb_puts(b, ", \"compile_time\": 0, \"verification_time\": 0, \"benchmark_time\": 0, \"strategy_time\": 0,"
               " \"framework_time\": 0}");
}

/* Write r (loaded under its objective) to f as Kernel Tuner 1.5 reads a cache file
 * (kernel_tuner/util.py, process_cache and read_cache): device_name
 * (device), kernel_name (the spec's name), problem_size ([the objective
 * points per variant]), tune_params_keys (the code axes), tune_params (their
 * declared values), objective "time", and one entry per variant keyed
 * "v1,v2,..." (Python's str of each value, joined by commas) whose "time" is
 * the objective as a geometric mean over the points (ms for a time; for a
 * rate, its reciprocal, so that lower is better as Kernel Tuner minimises),
 * or "RuntimeFailedConfig" for an invalid variant.  0, or -1 when f fails. */
static int kt_write(const SearchRecord *r, const char *device, FILE *f)
{
    StrBuf b, key;
    sb_init(&b), sb_init(&key);
    header(r, device, &b);
    for (int c = 0; c < r->sp.n; c++)
        entry(r, c, &b, &key);
    sb_puts(&b, "\n}\n}\n");
    int ok = fwrite(sb_str(&b), 1, b.len, f) == b.len;
    sb_free(&b), sb_free(&key);
    return ok ? 0 : -1;
}

int search_kt_export(struct sqlite3 *db, const char *spec, const char *objective, FILE *f, KvxError *err)
{
    SearchObjective o;
    SearchRecord r;
    if (search_objective_parse(objective, "--objective", &o, err) != 0)
        return -1;
    int rc = search_record_load(db, spec, &o, &r, err);
    if (rc == 0) {
        char gpu[256];
        store_search_gpu(db, spec, gpu, sizeof gpu);
        if ((rc = kt_write(&r, gpu[0] ? gpu : "unknown", f)) != 0)
            kvx_error_set(err, KVX_EIO, NULL, "export: the cache file could not be written");
        search_record_free(&r);
    }
    search_objective_free(&o);
    return rc;
}
