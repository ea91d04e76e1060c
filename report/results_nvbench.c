/* results_nvbench: kvx's results in nvbench's JSON result shape and back:
 * `kvx export --format nvbench` (so that nvbench_compare, from NVIDIA's
 * cuda-bench, reads two kvx runs side by side) and the nvbench JSON that
 * `kvx import` reads, turned into the reference CSV its importer takes.
 *
 * The shape (as nvbench's JSON printer writes it, file version 1.0.0): `meta` (argv,
 * version), `devices` (an id each, and the facts), `benchmarks` (one per spec:
 * `axes` with their type and values, `states` with `axis_values` and
 * `summaries`, each summary a tag and `data` [{name: "value", type, value}]).
 * A state is a case, named by its label, which two runs of a spec share: that
 * name is what nvbench_compare matches.
 *
 * Noise, explicitly: nvbench's noise (nvbench_compare's) is the relative
 * standard deviation of the GPU times, stdev / mean; kvx's `noise` is the
 * relative interquartile range, (p75 - p25) / median, which nvbench also
 * writes as `nv/cold/time/gpu/iqr/relative`.  Export writes both from what
 * kvx stored (stdev_ms / mean_ms, noise); import takes kvx's noise from the
 * IQR tag only, and the relative stdev into stdev_ms (times the mean): one is
 * never converted into the other. */
#include "results_core.h"

#include "core/json.h"
#include "core/num.h"
#include "core/version.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the summaries ------------------------------------------------------------- */

/* What one case's state carries: nvbench's tag, its "name", "hint", the
 * column (a field of NvCase) and the factor to nvbench's unit (seconds). */
#define NV_SUMMARIES(X)                                                                                  \
    X(mean, "nv/cold/time/gpu/mean", "GPU Time", "duration", "mean_ms", 1e-3)                            \
    X(stdev_rel, "nv/cold/time/gpu/stdev/relative", "Noise", "percentage", NULL, 1)                      \
    X(stdev, "nv/cold/time/gpu/stdev/absolute", "Noise", "duration", "stdev_ms", 1e-3)                   \
    X(median, "nv/cold/time/gpu/median", "Median GPU Time", "duration", "median_ms", 1e-3)               \
    X(min, "nv/cold/time/gpu/min", "Min GPU Time", "duration", "min_ms", 1e-3)                           \
    X(max, "nv/cold/time/gpu/max", "Max GPU Time", "duration", "max_ms", 1e-3)                           \
    X(noise, "nv/cold/time/gpu/iqr/relative", "Rel IQR", "percentage", "noise", 1)                       \
    X(samples, "nv/cold/sample_size", "Samples", "sample_size", NULL, 1)                                 \
    X(gbs, "nv/cold/bw/global/bytes_per_second", "GlobalMem BW", "byte_rate", "gbs", 1e9)                \
    X(eps, "nv/cold/bw/item_rate", "Elem/s", "item_rate", "elems_per_s", 1)

typedef enum {
#define X(id, tag, name, hint, col, scale) NV_##id,
    NV_SUMMARIES(X)
#undef X
    NV_COUNT
} NvSummaryId;

static const struct {
    const char *tag, *name, *hint, *col;
    double scale;
} nv_summary[NV_COUNT] = {
#define X(id, tag, name, hint, col, scale) {tag, name, hint, col, scale},
    NV_SUMMARIES(X)
#undef X
};

/* ---- export ---------------------------------------------------------------------- */

#define NV_MAX_DEVICES 64     /* a benchmark's devices listed */

typedef struct NvCase {
    const char *spec, *label, *status, *detail, *axes, *device;
    double v[NV_COUNT];        /* nvbench's units; NaN: not written */
} NvCase;

typedef struct NvDevice {
    const char *uuid, *name;
    int64_t cc, sms, mem, l2, mhz;
    double peak_gbs;
} NvDevice;

typedef struct NvExport {
    Arena *a;
    NvCase *cases;
    int ncases, cap;
    NvDevice *devs;
    int ndevs;
} NvExport;

/* The newest measured row of each (spec, label): a state is named by its
 * label, and nvbench_compare matches states by name.  References are left
 * out: they have no run of their own to compare. */
static const char NV_CASES_SQL[] =
    "SELECT c.spec_name, c.label, c.status, c.detail, c.axes, coalesce(c.device_uuid, r.gpu_uuid),"
    " c.mean_ms, c.stdev_ms, c.median_ms, c.min_ms, c.max_ms, c.noise, c.samples, c.gbs, c.elems_per_s,"
    " r.gpu_name, r.cc, r.sm_count, r.mem_bytes, r.l2_bytes, r.clock_mhz, r.peak_gbs"
    " FROM cases c JOIN runs r ON r.id = c.run_id WHERE r.kind = 'run' AND (?1 = '' OR c.spec_name = ?1)"
    " AND c.id = (SELECT max(c2.id) FROM cases c2 JOIN runs r2 ON r2.id = c2.run_id WHERE r2.kind = 'run'"
    " AND c2.spec_name = c.spec_name AND c2.label = c.label)"
    " ORDER BY c.spec_name, c.id";

static double col_or_nan(const StoreRows *st, int i)
{
    return store_rows_type(st, i) == STORE_NULL ? NAN : store_rows_double(st, i);
}

static const char *col_text(NvExport *x, const StoreRows *st, int i)
{
    const char *t = store_rows_text(st, i);
    return arena_strdup(x->a, t ? t : "");
}

/* The device of the row (cols 5, 15..21), added when new: its id. */
static void device_of(NvExport *x, const StoreRows *st, NvCase *c)
{
    for (int d = 0; d < x->ndevs; d++)
        if (!strcmp(x->devs[d].uuid, c->device))
            return;
    x->devs = mem_realloc(x->devs, sizeof *x->devs * (size_t)(x->ndevs + 1));
    x->devs[x->ndevs++] = (NvDevice){c->device, col_text(x, st, 15), store_rows_int(st, 16),
                                     store_rows_int(st, 17), store_rows_int(st, 18), store_rows_int(st, 19),
                                     store_rows_int(st, 20), col_or_nan(st, 21)};
}

static void case_load(NvExport *x, const StoreRows *st)
{
    if (x->ncases == x->cap)
        x->cases = mem_realloc(x->cases, sizeof *x->cases * (size_t)(x->cap = x->cap ? 2 * x->cap : 64));
    NvCase *c = &x->cases[x->ncases++];
    c->spec = col_text(x, st, 0), c->label = col_text(x, st, 1), c->status = col_text(x, st, 2);
    c->detail = col_text(x, st, 3), c->axes = col_text(x, st, 4), c->device = col_text(x, st, 5);
    double mean = col_or_nan(st, 6), stdev = col_or_nan(st, 7);
    c->v[NV_mean] = mean * 1e-3, c->v[NV_stdev] = stdev * 1e-3;
    c->v[NV_stdev_rel] = mean > 0 ? stdev / mean : NAN;
    c->v[NV_median] = col_or_nan(st, 8) * 1e-3, c->v[NV_min] = col_or_nan(st, 9) * 1e-3;
    c->v[NV_max] = col_or_nan(st, 10) * 1e-3, c->v[NV_noise] = col_or_nan(st, 11);
    c->v[NV_samples] = col_or_nan(st, 12);
    c->v[NV_gbs] = col_or_nan(st, 13) * 1e9, c->v[NV_eps] = col_or_nan(st, 14);
    device_of(x, st, c);
}

static int device_id(const NvExport *x, const char *uuid)
{
    for (int d = 0; d < x->ndevs; d++)
        if (!strcmp(x->devs[d].uuid, uuid))
            return d;
    return 0;
}

/* A number as nvbench writes one in `value`: a string, shortest round trip. */
static void put_num_str(FILE *out, double v, int integral)
{
    char buf[40];
    if (integral)
        snprintf(buf, sizeof buf, "%lld", (long long)llround(v));
    else
        num_write_double(buf, sizeof buf, v, NUM_SHORTEST);
    fprintf(out, "\"%s\"", buf);
}

/* Device d of the devices array, in nvbench's units (Hz, bytes, bytes/s). */
static void put_device(const NvDevice *v, int d, FILE *out)
{
    fprintf(out, "%s\n    {\"id\": %d, \"name\": ", d ? "," : "", d);
    json_write_str(out, v->name);
    fprintf(out, ", \"sm_version\": %lld, \"number_of_sms\": %lld, \"sm_default_clock_rate\": %lld,"
                 " \"global_memory_size\": %lld, \"l2_cache_size\": %lld,"
                 " \"global_memory_bus_bandwidth\": %.0f}",
            (long long)v->cc * 10, (long long)v->sms, (long long)v->mhz * 1000000, (long long)v->mem,
            (long long)v->l2, isfinite(v->peak_gbs) ? v->peak_gbs * 1e9 : 0);
}

static void put_devices(const NvExport *x, FILE *out)
{
    fputs("  \"devices\": [", out);
    for (int d = 0; d < x->ndevs; d++)
        put_device(&x->devs[d], d, out);
    fputs("\n  ],\n", out);
}

/* One axis of a benchmark: its name, its values in first-seen order, and
 * the narrowest nvbench type that holds them all. */
typedef struct NvAxis {
    const char *name;
    const char **vals;
    int nvals, cap;
    int all_int, all_num;
} NvAxis;

typedef struct NvBench {
    NvAxis ax[RESULTS_MAX_AXES];
    int nax;
    int devs[NV_MAX_DEVICES];
    int ndevs;
} NvBench;

static void axis_add(NvExport *x, NvBench *b, const char *name, const char *type, const char *atom)
{
    int i = 0;
    while (i < b->nax && strcmp(b->ax[i].name, name))
        i++;
    if (i == b->nax) {
        if (b->nax == RESULTS_MAX_AXES)
            return;
        b->ax[b->nax++] = (NvAxis){arena_strdup(x->a, name), NULL, 0, 0, 1, 1};
    }
    NvAxis *a = &b->ax[i];
    a->all_int &= !strcmp(type, "integer");
    a->all_num &= !strcmp(type, "integer") || !strcmp(type, "real");
    for (int k = 0; k < a->nvals; k++)
        if (!strcmp(a->vals[k], atom))
            return;
    if (a->nvals == a->cap)
        a->vals = mem_realloc(a->vals, sizeof *a->vals * (size_t)(a->cap = a->cap ? 2 * a->cap : 8));
    a->vals[a->nvals++] = arena_strdup(x->a, atom);
}

static const char *axis_type(const NvAxis *a)
{
    return a->all_int ? "int64" : a->all_num ? "float64" : "string";
}

/* Each axis value of case c, to axis_add (b given) or written as the
 * state's axis_values (out given).  0 or -1 with err. */
static int case_axes(NvExport *x, Store *db, const NvCase *c, NvBench *b, FILE *out,
                     KvxError *err)
{
    Value p = val_str(c->axes);
    StoreRows *st = store_rows(db, "SELECT key, type, coalesce(atom, '') FROM json_each(?1) ORDER BY id", &p, 1,
                               err);
    if (!st)
        return -1;
    int rc, n = 0;
    while ((rc = store_rows_next(st, "reading a case's axes", err)) > 0) {
        const char *name = store_rows_text(st, 0), *atom = store_rows_text(st, 2);
        if (!out) {
            axis_add(x, b, name, store_rows_text(st, 1), atom);
            continue;
        }
        int k = 0;
        while (k < b->nax && strcmp(b->ax[k].name, name))
            k++;
        fprintf(out, "%s{\"name\": ", n++ ? ", " : "");
        json_write_str(out, name);
        fprintf(out, ", \"type\": \"%s\", \"value\": ", k < b->nax ? axis_type(&b->ax[k]) : "string");
        json_write_str(out, atom);
        fputs("}", out);
    }
    store_rows_close(st);
    return rc;
}

static void put_axes(const NvBench *b, FILE *out)
{
    fputs("      \"axes\": [", out);
    for (int i = 0; i < b->nax; i++) {
        const NvAxis *a = &b->ax[i];
        fprintf(out, "%s\n        {\"name\": ", i ? "," : "");
        json_write_str(out, a->name);
        fprintf(out, ", \"type\": \"%s\", \"flags\": \"\", \"values\": [", axis_type(a));
        for (int k = 0; k < a->nvals; k++) {
            fputs(k ? ", {\"input_string\": " : "{\"input_string\": ", out);
            json_write_str(out, a->vals[k]);
            fputs(", \"description\": \"\", \"value\": ", out);
            if (a->all_num)
                fputs(a->vals[k], out);
            else
                json_write_str(out, a->vals[k]);
            fputs("}", out);
        }
        fputs("]}", out);
    }
    fputs("\n      ],\n", out);
}

/* Summary s (an NvSummary) holding v: the samples count as int64, the rest
 * as float64. */
static void put_summary(int s, double v, int first, FILE *out)
{
    int integral = s == NV_samples;
    fprintf(out, "%s\n            {\"tag\": \"%s\", \"name\": \"%s\", \"hint\": \"%s\", \"data\": "
                 "[{\"name\": \"value\", \"type\": \"%s\", \"value\": ",
            first ? "" : ",", nv_summary[s].tag, nv_summary[s].name, nv_summary[s].hint,
            integral ? "int64" : "float64");
    put_num_str(out, v, integral);
    fputs("}]}", out);
}

static void put_summaries(const NvCase *c, FILE *out)
{
    int n = 0;
    fputs("\"summaries\": [", out);
    for (int s = 0; s < NV_COUNT; s++)
        if (isfinite(c->v[s]))
            put_summary(s, c->v[s], n++ == 0, out);
    fputs("]", out);
}

/* A state per case: named by its label; a case that did not measure (any
 * status but ok) is skipped, its status and detail the reason. */
static int put_state(NvExport *x, Store *db, NvBench *b, const NvCase *c, int first, FILE *out,
                     KvxError *err)
{
    fputs(first ? "\n          {\"name\": " : ",\n          {\"name\": ", out);
    json_write_str(out, c->label);
    fprintf(out, ", \"device\": %d, \"type_config_index\": 0, \"axis_values\": [", device_id(x, c->device));
    if (case_axes(x, db, c, b, out, err) < 0)
        return -1;
    fputs("],\n           ", out);
    int ok = !strcmp(c->status, "ok");
    if (ok) {
        put_summaries(c, out);
        fputs(", \"is_skipped\": false}", out);
        return 0;
    }
    fputs("\"summaries\": [], \"is_skipped\": true, \"skip_reason\": ", out);
    json_write_str(out, arena_printf(x->a, "kvx status %s%s%s", c->status, *c->detail ? ": " : "",
                                      c->detail));
    fputs("}", out);
    return 0;
}

/* The benchmark of spec cases [from, to). */
static int put_bench(NvExport *x, Store *db, int index, int from, int to, FILE *out, KvxError *err)
{
    NvBench *b = mem_calloc(1, sizeof *b);
    int rc = 0;
    for (int i = from; i < to && rc == 0; i++) {
        rc = case_axes(x, db, &x->cases[i], b, NULL, err);
        int d = device_id(x, x->cases[i].device), k = 0;
        while (k < b->ndevs && b->devs[k] != d)
            k++;
        if (k == b->ndevs && b->ndevs < NV_MAX_DEVICES)
            b->devs[b->ndevs++] = d;
    }
    fprintf(out, "%s\n    {\n      \"name\": ", index ? "," : "");
    json_write_str(out, x->cases[from].spec);
    fprintf(out, ",\n      \"index\": %d,\n      \"devices\": [", index);
    for (int k = 0; k < b->ndevs; k++)
        fprintf(out, "%s%d", k ? ", " : "", b->devs[k]);
    fputs("],\n", out);
    put_axes(b, out);
    fputs("      \"states\": [", out);
    for (int i = from; i < to && rc == 0; i++)
        rc = put_state(x, db, b, &x->cases[i], i == from, out, err);
    fputs("\n      ]\n    }", out);
    for (int i = 0; i < b->nax; i++)
        free(b->ax[i].vals);
    free(b);
    return rc;
}

static int load_cases(NvExport *x, Store *db, const char *spec, KvxError *err)
{
    Value p = val_str(spec ? spec : "");
    StoreRows *st = store_rows(db, NV_CASES_SQL, &p, 1, err);
    if (!st)
        return -1;
    int rc;
    while ((rc = store_rows_next(st, "reading the cases", err)) > 0)
        case_load(x, st);
    store_rows_close(st);
    return rc;
}

int results_export_nvbench(Store *db, const char *spec, FILE *out, KvxError *err)
{
    NvExport x = {.a = arena_new()};
    int rc = load_cases(&x, db, spec, err);
    if (rc == 0) {
        fputs("{\n  \"meta\": {\"argv\": [\"kvx\", \"export\", \"--format\", \"nvbench\"], \"version\": "
              "{\"json\": {\"major\": 1, \"minor\": 0, \"patch\": 0, \"string\": \"1.0.0\"}, \"kvx\": "
              "{\"string\": ", out);
        json_write_str(out, version_text());
        fputs("}}},\n", out);
        put_devices(&x, out);
        fputs("  \"benchmarks\": [", out);
    }
    for (int i = 0, k = 0; rc == 0 && i < x.ncases; k++) {
        int j = i;
        while (j < x.ncases && !strcmp(x.cases[j].spec, x.cases[i].spec))
            j++;
        rc = put_bench(&x, db, k, i, j, out, err);
        i = j;
    }
    if (rc == 0)
        fputs("\n  ]\n}\n", out);
    free(x.cases);
    free(x.devs);
    arena_free(x.a);
    return rc;
}

/* ---- import ---------------------------------------------------------------------- */

/* One state read from nvbench JSON: its benchmark, axis values (names as
 * kvx identifiers), summaries by NvSummaryId (NaN: absent) and skip. */
typedef struct NvState {
    const char *bench;
    const char *ax_name[RESULTS_MAX_AXES], *ax_val[RESULTS_MAX_AXES];
    int nax;
    double v[NV_COUNT];
    const char *skip;          /* the skip reason, or NULL when measured */
} NvState;

typedef struct NvImport {
    Arena *a;
    NvState *st;
    int n, cap, nbench;
    const char *names[RESULTS_MAX_AXES];   /* every axis, first seen first */
    int nnames;
    const char *gpu;
} NvImport;

int results_nvbench_is(const char *text)
{
    const char *p = text + strspn(text, " \t\r\n");
    return *p == '{' && strstr(p, "\"benchmarks\"") != NULL;
}

/* nvbench's axis name ("Elements{io}") as an identifier ("Elements_io"). */
static const char *ident_of(Arena *a, const char *name)
{
    StrBuf b;
    sb_init(&b);
    if (!((*name >= 'A' && *name <= 'Z') || (*name >= 'a' && *name <= 'z') || *name == '_'))
        sb_putc(&b, '_');
    for (const char *p = name; *p; p++) {
        int ok = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_';
        if (ok || (b.len && sb_str(&b)[b.len - 1] != '_'))
            sb_putc(&b, ok ? *p : '_');
    }
    while (b.len > 1 && sb_str(&b)[b.len - 1] == '_')
        b.len--, b.p[b.len] = '\0';
    const char *out = arena_strdup(a, sb_str(&b));
    sb_free(&b);
    return out;
}

static int state_axes(NvImport *im, Store *db, const char *state, NvState *s, KvxError *err)
{
    Value p = val_str(state);
    StoreRows *st = store_rows(db, "SELECT json_extract(value, '$.name'), json_extract(value, '$.value')"
                                   " FROM json_each(?1, '$.axis_values') ORDER BY key", &p, 1, err);
    if (!st)
        return -1;
    int rc;
    while ((rc = store_rows_next(st, "reading nvbench axis values", err)) > 0 && s->nax < RESULTS_MAX_AXES) {
        const char *name = ident_of(im->a, store_rows_text(st, 0) ? store_rows_text(st, 0) : "axis");
        s->ax_name[s->nax] = name;
        s->ax_val[s->nax++] = arena_strdup(im->a, store_rows_text(st, 1) ? store_rows_text(st, 1) : "");
        int k = 0;
        while (k < im->nnames && strcmp(im->names[k], name))
            k++;
        if (k == im->nnames && k < RESULTS_MAX_AXES)
            im->names[im->nnames++] = name;
    }
    store_rows_close(st);
    return rc;
}

static int state_summaries(Store *db, const char *state, NvState *s, KvxError *err)
{
    Value p = val_str(state);
    StoreRows *st = store_rows(db, "SELECT json_extract(m.value, '$.tag'), json_extract(d.value, '$.value')"
                                   " FROM json_each(?1, '$.summaries') m, json_each(m.value, '$.data') d"
                                   " WHERE json_extract(d.value, '$.name') = 'value'", &p, 1, err);
    if (!st)
        return -1;
    for (int k = 0; k < NV_COUNT; k++)
        s->v[k] = NAN;
    int rc;
    while ((rc = store_rows_next(st, "reading nvbench summaries", err)) > 0) {
        const char *tag = store_rows_text(st, 0);
        for (int k = 0; tag && k < NV_COUNT; k++)
            if (!strcmp(tag, nv_summary[k].tag) && store_rows_type(st, 1) != STORE_NULL)
                s->v[k] = store_rows_double(st, 1);     /* "1.5e-05" or a number: SQLite reads both */
    }
    store_rows_close(st);
    return rc;
}

/* Every state of every benchmark, in file order. */
static int read_states(NvImport *im, Store *db, const char *json, KvxError *err)
{
    Value p = val_str(json);
    StoreRows *st = store_rows(db, "SELECT json_extract(b.value, '$.name'), s.value,"
                                   " coalesce(json_extract(s.value, '$.is_skipped'), 0),"
                                   " json_extract(s.value, '$.skip_reason'), (SELECT json_extract(d.value, '$.name')"
                                   " FROM json_each(?1, '$.devices') d WHERE json_extract(d.value, '$.id') ="
                                   " json_extract(s.value, '$.device')), b.key"
                                   " FROM json_each(?1, '$.benchmarks') b, json_each(b.value, '$.states') s"
                                   " ORDER BY b.key, s.key", &p, 1, err);
    if (!st)
        return -1;
    int rc;
    while ((rc = store_rows_next(st, "reading nvbench JSON", err)) > 0) {
        if (im->n == im->cap)
            im->st = mem_realloc(im->st, sizeof *im->st * (size_t)(im->cap = im->cap ? 2 * im->cap : 64));
        NvState *s = memset(&im->st[im->n++], 0, sizeof *im->st);
        s->bench = arena_strdup(im->a, store_rows_text(st, 0) ? store_rows_text(st, 0) : "");
        const char *reason = store_rows_text(st, 3);
        s->skip = store_rows_int(st, 2) ? arena_strdup(im->a, reason ? reason : "skipped") : NULL;
        if (!im->gpu && store_rows_text(st, 4))
            im->gpu = arena_strdup(im->a, store_rows_text(st, 4));
        im->nbench = (int)store_rows_int(st, 5) + 1 > im->nbench ? (int)store_rows_int(st, 5) + 1 : im->nbench;
        const char *state = arena_strdup(im->a, store_rows_text(st, 1));
        if (state_axes(im, db, state, s, err) < 0 || state_summaries(db, state, s, err) < 0) {
            rc = -1;
            break;
        }
    }
    store_rows_close(st);
    return rc;
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

/* A state's row: [benchmark,] axes, then the values in kvx's units. */
static void state_row(const NvImport *im, const NvState *s, StrBuf *b)
{
    if (im->nbench > 1)
        csv_quoted(b, s->bench, 1);
    for (int k = 0; k < im->nnames; k++) {
        const char *v = "";
        for (int i = 0; i < s->nax; i++)
            if (!strcmp(s->ax_name[i], im->names[k]))
                v = s->ax_val[i];
        csv_quoted(b, v, k == 0 && im->nbench <= 1);
    }
    const double *v = s->v;
    double median = isfinite(v[NV_median]) ? v[NV_median] : v[NV_mean];
    double stdev = isfinite(v[NV_stdev]) ? v[NV_stdev] : v[NV_stdev_rel] * v[NV_mean];
    csv_num(b, median * 1e3);
    csv_num(b, v[NV_mean] * 1e3);
    csv_num(b, v[NV_min] * 1e3);
    csv_num(b, v[NV_max] * 1e3);
    csv_num(b, stdev * 1e3);
    csv_num(b, v[NV_noise]);
    csv_num(b, v[NV_gbs] / 1e9);
    csv_num(b, v[NV_eps]);
    sb_printf(b, ",%s\n", s->skip ? "skipped" : "ok");
}

/* 1 when json is valid JSON; 0 with err (an input error: SQLite's reader
 * names no position). */
static int json_ok(Store *db, const char *json, const char *path, KvxError *err)
{
    Value p = val_str(json);
    StoreRows *st = store_rows(db, "SELECT json_valid(?1)", &p, 1, err);
    int ok = st && store_rows_next(st, "checking JSON", err) > 0 && store_rows_int(st, 0) == 1;
    store_rows_close(st);
    if (!ok && !err->code)
        kvx_error_set(err, KVX_EINPUT, NULL, "%s: malformed JSON (expected nvbench's JSON result)", path);
    return ok;
}

char *results_nvbench_csv(Store *db, const char *json, const char *path, Arena *a, const char **gpu,
                          KvxError *err)
{
    NvImport im = {.a = a};
    char *out = NULL;
    if (json_ok(db, json, path, err) && read_states(&im, db, json, err) == 0 && im.n == 0)
        kvx_error_set(err, KVX_EINPUT, NULL, "%s: nvbench JSON with no states (expected"
                      " benchmarks[].states[])", path);
    if (!err->code && im.nnames == 0 && im.nbench <= 1)
        im.names[im.nnames++] = "state";      /* a benchmark without axes: one state */
    if (!err->code) {
        StrBuf b;
        sb_init(&b);
        if (im.nbench > 1)
            sb_puts(&b, "benchmark");
        for (int k = 0; k < im.nnames; k++)
            sb_printf(&b, "%s%s", k || im.nbench > 1 ? "," : "", im.names[k]);
        sb_puts(&b, ",median_ms,mean_ms,min_ms,max_ms,stdev_ms,noise,gbs,elems_per_s,status\n");
        for (int i = 0; i < im.n; i++)
            state_row(&im, &im.st[i], &b);
        out = sb_take(&b);
        *gpu = im.gpu;
    }
    free(im.st);
    return out;
}
