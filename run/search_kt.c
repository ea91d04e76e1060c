/* search_kt: a recorded space (search_db.h) in Kernel Tuner's cache-file
 * format, so that Kernel Tuner's strategies replay the same space in its
 * simulation mode (bench/kernel_tuner_replay.py) as `kvx replay` does:
 * search_kt_export (run.h), `kvx export --format kerneltuner`.  Numbers go
 * out as the store's text of them, strings as JSON strings; an entry's key
 * joins the same texts, which is what Python's str gives for the values
 * json.load reads back (ints, and floats of a short decimal such as 0.05).
 *
 * Each variant's figures are summed (times) or averaged geometrically
 * (metrics) over its objective points, the cases search_record_load read
 * (r->pcase): what Kernel Tuner's simulation mode adds up is what kvx spent.
 * What each field holds: kt_write below; a failed variant's error name is
 * report/results_kt.c's table (results_kt_error), by which `kvx import`
 * reads such a file back. */
#include "search_db.h"
#include "core/json.h"
#include "core/num.h"
#include "core/values.h"
#include "report/results.h"
#include "store/store_search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Past this many combinations of the code axes' values the pruned ones are
 * not written (each is an entry of the file). */
#define SEARCH_KT_MAX_PRODUCT (1 << 20)

/* A `--counters` metric's geometric mean under way. */
typedef struct KtMetric {
    const char *name;
    double logsum;
    int n, bad;
} KtMetric;

/* What a variant's cases add up to. */
typedef struct KtCand {
    double compile_ms, verify_ms, measure_ms;
    int64_t last;                 /* the newest case read: its variant's compile */
    const char *fail;             /* Kernel Tuner's error for it, or NULL */
    const char *samples;          /* one objective point: its kept samples */
    double gbs_log;
    int ngbs, gbs_bad;
    KtMetric *metrics;
    int nmetrics, cap;
} KtCand;

typedef struct KtLoad {
    const SearchRecord *r;
    Arena *a;
    KtCand *cand;
    StrBuf kernels;               /* the entry points, '+'-joined, each once */
} KtLoad;

/* The candidate of case id, or -1 (not an objective point of a kept one). */
static int cand_of(const KtLoad *k, int64_t id)
{
    return search_record_cand_of(k->r, id);
}

static void add_kernels(KtLoad *k, const char *kernels)
{
    char name[256];
    for (const char *p = kernels; p && *p;) {
        size_t n = strcspn(p, "+");
        snprintf(name, sizeof name, "+%.*s+", (int)(n < 200 ? n : 200), p);
        if (n && !strstr(sb_str(&k->kernels), name))
            sb_printf(&k->kernels, "%.*s+", (int)(n < 200 ? n : 200), p);
        p += n + (p[n] == '+');
    }
}

static void on_facts(void *ctx, const StoreSearchFacts *f)
{
    KtLoad *k = ctx;
    int c = cand_of(k, f->id);
    if (c < 0)
        return;
    KtCand *kc = &k->cand[c];
    if (f->id > kc->last)
        kc->last = f->id, kc->compile_ms = isnan(f->compile_ms) ? 0 : f->compile_ms;
    kc->verify_ms += isnan(f->verify_ms) ? 0 : f->verify_ms;
    kc->measure_ms += isnan(f->measure_ms) ? 0 : f->measure_ms;
    const char *e = results_kt_error(f->status);
    if (e && (!kc->fail || strcmp(e, "CompilationFailedConfig") == 0))
        kc->fail = e;
    kc->samples = f->samples_json ? arena_strdup(k->a, f->samples_json) : NULL;
    if (f->gbs > 0 && isfinite(f->gbs))
        kc->gbs_log += log(f->gbs), kc->ngbs++;
    else
        kc->gbs_bad = 1;
    add_kernels(k, f->kernels);
}

static void on_metric(void *ctx, int64_t id, const char *metric, double value)
{
    KtLoad *k = ctx;
    int c = cand_of(k, id);
    if (c < 0 || !metric)
        return;
    KtCand *kc = &k->cand[c];
    int i = 0;
    while (i < kc->nmetrics && strcmp(kc->metrics[i].name, metric))
        i++;
    if (i == kc->nmetrics) {
        if (kc->nmetrics == kc->cap) {
            KtMetric *grown = arena_alloc(k->a, sizeof *grown * (size_t)(kc->cap = kc->cap ? 2 * kc->cap : 8));
            if (kc->nmetrics)
                memcpy(grown, kc->metrics, sizeof *grown * (size_t)kc->nmetrics);
            kc->metrics = grown;
        }
        kc->metrics[kc->nmetrics++] = (KtMetric){arena_strdup(k->a, metric), 0, 0, 0};
    }
    if (value > 0 && isfinite(value))
        kc->metrics[i].logsum += log(value), kc->metrics[i].n++;
    else
        kc->metrics[i].bad = 1;
}

/* Every kept candidate's figures from the store.  0, or -1 with err. */
static int kt_load(Store *db, const SearchRecord *r, KtLoad *k, KvxError *err)
{
    k->r = r;
    k->a = arena_new();
    k->cand = mem_calloc((size_t)(r->sp.n ? r->sp.n : 1), sizeof *k->cand);
    sb_init(&k->kernels);
    sb_putc(&k->kernels, '+');
    if (store_search_facts(db, r->spec, on_facts, k, err) ||
        store_search_counters(db, r->spec, on_metric, k, err))
        return -1;
    return 0;
}

static void kt_free(KtLoad *k)
{
    free(k->cand);
    sb_free(&k->kernels);
    arena_free(k->a);
}

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

static void put_number(StrBuf *b, double v)
{
    char t[32];
    num_write_double(t, sizeof t, v, NUM_SHORTEST);
    sb_puts(b, t);
}

/* What the objective goes out as: under "time" (a time objective), or
 * under its own name with the variants' time beside it. */
typedef struct KtOut {
    const char *field;            /* NULL: "time" is the objective */
    int higher;                   /* objective_higher_is_better */
    const double *ty;             /* field: per candidate, log median_ms (NaN none); NULL none */
} KtOut;

/* kernel_name: the variants' entry points, or the spec's name where the
 * store does not list them (a file before schema 5). */
static void header(const SearchRecord *r, const KtLoad *k, const KtOut *out, const char *device, StrBuf *b)
{
    const char *kern = sb_str(&k->kernels);
    sb_puts(b, "{\n\"device_name\": ");
    json_put_str(b, device, JSON_BYTES);
    sb_puts(b, ",\n\"kernel_name\": ");
    if (strlen(kern) > 1) {
        StrBuf t;
        sb_init(&t);
        sb_printf(&t, "%.*s", (int)strlen(kern) - 2, kern + 1);
        json_put_str(b, sb_str(&t), JSON_BYTES);
        sb_free(&t);
    } else {
        json_put_str(b, r->spec, JSON_BYTES);
    }
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
    sb_puts(b, "},\n\"objective\": ");
    json_put_str(b, out->field ? out->field : "time", JSON_BYTES);
    sb_printf(b, ",\n\"objective_higher_is_better\": %s,\n\"cache\": {", out->higher ? "true" : "false");
}

/* The entry's key and its tune parameters: "KEY": {"a": 1, ..., */
static void entry_open(const SearchRecord *r, const int *v, int first, StrBuf *b, StrBuf *key)
{
    sb_reset(key);
    for (int a = 0; a < r->sp.naxes; a++)
        sb_printf(key, "%s%s", a ? "," : "", r->text[a][v[a]]);
    sb_puts(b, first ? "\n" : ",\n");
    json_put_str(b, sb_str(key), JSON_BYTES);
    sb_puts(b, ": {");
    for (int a = 0; a < r->sp.naxes; a++) {
        json_put_str(b, r->axis[a], JSON_BYTES);
        sb_puts(b, ": ");
        put_value(b, r->text[a][v[a]]);
        sb_puts(b, ", ");
    }
}

/* "time" and "times": the objective, ms (a time objective), else the
 * variant's median_ms with the objective under its own name (out->field);
 * times the kept samples of a one-point time objective, else the one value. */
static void entry_time(const SearchRecord *r, const KtCand *kc, int c, const KtOut *out, StrBuf *b)
{
    double y = r->y[c];
    if (kc->fail || isnan(y)) {
        sb_printf(b, "\"time\": \"%s\", \"times\": []", kc->fail ? kc->fail : "RuntimeFailedConfig");
        if (out->field) {
            sb_puts(b, ", ");
            json_put_str(b, out->field, JSON_BYTES);
            sb_printf(b, ": \"%s\"", kc->fail ? kc->fail : "RuntimeFailedConfig");
        }
        return;
    }
    if (out->field) {
        json_put_str(b, out->field, JSON_BYTES);
        sb_puts(b, ": ");
        put_number(b, exp(out->higher ? -y : y));
        y = out->ty && !isnan(out->ty[c]) ? out->ty[c] : NAN;
        sb_puts(b, ", ");
        if (isnan(y)) {
            sb_puts(b, "\"times\": []");
            return;
        }
    }
    sb_puts(b, "\"time\": ");
    put_number(b, exp(y));
    sb_puts(b, ", \"times\": ");
    if (!out->field && r->npoints == 1 && kc->samples) {
        sb_puts(b, kc->samples);
        return;
    }
    sb_putc(b, '[');
    put_number(b, exp(y));
    sb_putc(b, ']');
}

static void entry(const SearchRecord *r, const KtCand *kc, int c, const KtOut *out, StrBuf *b, StrBuf *key)
{
    entry_open(r, r->vals + (size_t)c * (size_t)r->sp.naxes, c == 0, b, key);
    entry_time(r, kc, c, out, b);
    sb_puts(b, ", \"compile_time\": ");
    put_number(b, kc->compile_ms);
    sb_puts(b, ", \"verification_time\": ");
    put_number(b, kc->verify_ms);
    sb_puts(b, ", \"benchmark_time\": ");
    put_number(b, kc->measure_ms);
    sb_puts(b, ", \"strategy_time\": 0, \"framework_time\": 0");
    if (kc->ngbs && !kc->gbs_bad) {
        sb_puts(b, ", \"GB/s\": ");
        put_number(b, exp(kc->gbs_log / kc->ngbs));
    }
    for (int i = 0; i < kc->nmetrics; i++)
        if (kc->metrics[i].n && !kc->metrics[i].bad) {
            sb_puts(b, ", ");
            json_put_str(b, kc->metrics[i].name, JSON_BYTES);
            sb_puts(b, ": ");
            put_number(b, exp(kc->metrics[i].logsum / kc->metrics[i].n));
        }
    sb_putc(b, '}');
}

/* Every combination of the code axes' values that is no stored variant (the
 * spec's where: pruned it, or it was not measured at every objective point),
 * as an InvalidConfig entry: Kernel Tuner's simulation then finds every
 * point of its product space, with its restrictions or without.  Up to
 * SEARCH_KT_MAX_PRODUCT combinations; past that the file holds only the
 * variants (docs/cli.md). */
static void pruned(const SearchRecord *r, StrBuf *b, StrBuf *key)
{
    double product = 1;
    for (int a = 0; a < r->sp.naxes; a++)
        product *= r->nvals[a];
    if (product > SEARCH_KT_MAX_PRODUCT)
        return;
    /* Each variant's place in the product, mixed radix in axis order. */
    unsigned char *have = mem_calloc((size_t)product, 1);
    for (int c = 0; c < r->sp.n; c++) {
        size_t at = 0;
        for (int a = 0; a < r->sp.naxes; a++)
            at = at * (size_t)r->nvals[a] + (size_t)r->vals[(size_t)c * (size_t)r->sp.naxes + (size_t)a];
        have[at] = 1;
    }
    int v[SEARCH_MAX_AXES] = {0};
    for (size_t n = 0; n < (size_t)product; n++) {
        if (!have[n]) {
            entry_open(r, v, 0, b, key);
            sb_puts(b, "\"time\": \"InvalidConfig\", \"times\": [], \"compile_time\": 0, \"verification_time\": 0,"
                       " \"benchmark_time\": 0, \"strategy_time\": 0, \"framework_time\": 0}");
        }
        for (int a = r->sp.naxes - 1; a >= 0 && ++v[a] == r->nvals[a]; a--)
            v[a] = 0;
    }
    free(have);
}

/* The log median_ms of each candidate of r (its objective o another
 * value), from rt loaded over o's points; NULL when rt's candidates are not
 * r's (then no time goes out). */
static const double *median_ms(Store *db, const SearchRecord *r, const SearchObjective *o, SearchRecord *rt)
{
    SearchObjective ot = {0};
    KvxError e = {0};
    char text[1024];
    snprintf(text, sizeof text, "median_ms%s%s", o->points ? "," : "", o->points ? o->points : "");
    int ok = search_objective_parse(text, "--objective", &ot, &e) == 0 && search_record_load(db, r->spec, &ot, rt, &e) == 0 &&
             rt->sp.n == r->sp.n &&
             !memcmp(rt->vals, r->vals, sizeof(int) * (size_t)r->sp.n * (size_t)r->sp.naxes);
    search_objective_free(&ot);
    kvx_error_clear(&e);
    return ok ? rt->y : NULL;
}

/* Write r (loaded from db under objective o) to f as Kernel Tuner 1.5 reads
 * a cache file (kernel_tuner/util.py, process_cache and read_cache):
 * device_name (device), kernel_name (the variants' entry points, '+'-joined;
 * the spec's name in a file before schema 5), problem_size ([the objective
 * points per variant]), tune_params_keys (the code axes), tune_params (their
 * declared values), objective ("time" for a time objective, else the
 * objective's value name, as Kernel Tuner's tune_kernel(objective=) takes
 * it), objective_higher_is_better (kvx's: tune_kernel's argument of that
 * name; a rate such as gbs is true), and one entry per variant keyed
 * "v1,v2,..." (Python's str of each value, joined by commas):
 *   time               a time objective as a geometric mean over the points,
 *                      ms; for any other objective the variant's median_ms
 *                      so, and the objective under its own name beside it;
 *                      or the error of a variant with a point not ok (in
 *                      both fields): CompilationFailedConfig (compile_error),
 *                      InvalidConfig (skipped: the device's limits),
 *                      RuntimeFailedConfig (any other);
 *   times              the kept samples (`--keep-samples`) of a time objective
 *                      over one point, else [time];
 *   compile_time       its variant's NVRTC time, ms;
 *   verification_time  its points' t_verify_ms, summed;
 *   benchmark_time     its points' t_input_ms + t_measure_ms, summed: what
 *                      Kernel Tuner's simulation adds up is what kvx spent;
 *   GB/s and every `--counters` metric: the geometric mean over the points
 *                      (absent where a point lacks it).
 * Every other combination of the code axes' values (pruned by the spec's
 * where:, or not measured at every point) is an InvalidConfig entry, up to
 * SEARCH_KT_MAX_PRODUCT combinations.  0, or -1 with err. */
static int kt_write(Store *db, const SearchRecord *r, const SearchObjective *o, const char *device, FILE *f,
                    KvxError *err)
{
    KtLoad k = {0};
    if (kt_load(db, r, &k, err)) {
        kt_free(&k);
        return -1;
    }
    int vi = values_find(o->column);
    KtOut out = {.higher = !o->lower};
    SearchRecord rt = {0};
    if (vi < 0 || values_info[vi].unit != VALUE_TIME)
        out.field = o->column, out.ty = median_ms(db, r, o, &rt);
    StrBuf b, key;
    sb_init(&b), sb_init(&key);
    header(r, &k, &out, device, &b);
    for (int c = 0; c < r->sp.n; c++)
        entry(r, &k.cand[c], c, &out, &b, &key);
    pruned(r, &b, &key);
    sb_puts(&b, "\n}\n}\n");
    int ok = fwrite(sb_str(&b), 1, b.len, f) == b.len;
    if (!ok)
        kvx_error_set(err, KVX_EIO, NULL, "export: the cache file could not be written");
    sb_free(&b), sb_free(&key);
    search_record_free(&rt);
    kt_free(&k);
    return ok ? 0 : -1;
}

int search_kt_export(Store *db, const char *spec, const char *objective, FILE *f, KvxError *err)
{
    SearchObjective o;
    SearchRecord r;
    if (search_objective_parse(objective, "--objective", &o, err) != 0)
        return -1;
    int rc = search_record_load(db, spec, &o, &r, err);
    if (rc == 0) {
        char gpu[256];
        store_search_gpu(db, spec, gpu, sizeof gpu);
        rc = kt_write(db, &r, &o, gpu[0] ? gpu : "unknown", f, err);
        search_record_free(&r);
    }
    search_objective_free(&o);
    return rc;
}
