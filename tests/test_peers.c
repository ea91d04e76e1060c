/* peers: kvx-peers --list (bench/peers.cu) against kvx's own path, no GPU.
 *
 * For every row the peer lists, the test resolves the point the row names
 * itself, as `kvx run` resolves a case for a worker (plan for sm_90,
 * resolve_case with the spec's measurement settings), generates its input
 * with inputs_fill and checks:
 * - the peer's input key and content hash are those of that input (the same
 *   generator, parameters and seed; --seed 7 changes both the same way);
 * - the levels the peer would give CUB bin that input as kvx's histogram()
 *   reference does (CUB's integer binning rules, written out here): for
 *   specs/histogram.yaml both HistogramEven and HistogramRange; for
 *   tests/data/specs/peer_hist.yaml, HistogramEven counts values above hi in
 *   its last bin where lo + bins * width > hi + 1 (tail, empty_last, wide)
 *   and HistogramRange never does; and the peer's own host column says the
 *   same;
 * - contention's rows are one per (counter, n, hit_rate) at one counter and
 *   a compile-time address, each counting in[i] < round(hit_rate * 1000);
 * - rows sharing an input generate it once;
 * - the CSV of --list --out imports with `kvx import` as a reference whose
 *   axes line up with the spec's (kvx table --ref), metrics as kvx's.
 * Without kvx-peers (no CUDA compiler at configure time) the test exits 77. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef KVX_PEERS_BINARY

#include "host/inputs.h"
#include "resolve/resolve.h"
#include "host/verify.h"

/* The shard helpers of kvx_child.h are the run tests', not used here. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "tests/kvx_child.h"
#pragma GCC diagnostic pop

#define SPECS KVX_SOURCE_DIR "/specs/"
#define TSPECS KVX_SOURCE_DIR "/tests/data/specs/"

/* ---- running kvx-peers --------------------------------------------------------------- */

/* KVX_PEERS_BINARY args... (NULL-terminated), stdout to out, stderr to err.
 * The exit code. */
static int peers(const char *out, const char *err, ...)
{
    const char *argv[32] = {"kvx-peers"};
    int n = 1;
    va_list ap;
    va_start(ap, err);
    while (n < 31 && (argv[n] = va_arg(ap, const char *)))
        n++;
    va_end(ap);
    argv[n] = NULL;
    fflush(stdout);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (!freopen(out, "w", stdout) || !freopen(err, "w", stderr))
            _exit(126);
        execv(KVX_PEERS_BINARY, (char *const *)argv);
        _exit(127);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* One listed line: row, point, peer, levels, input, type, count, key, hash, init, host. */
enum { F_ROW, F_POINT, F_PEER, F_LEVELS, F_INPUT, F_TYPE, F_COUNT, F_KEY, F_HASH, F_INIT, F_HOST, NFIELDS };

typedef struct Listing {
    char *text;
    char *(*f)[NFIELDS];
    int n;
    char *tail;     /* the closing "# N rows, ..." comment */
} Listing;

static void listing_read(const char *path, Listing *l)
{
    memset(l, 0, sizeof *l);
    l->text = file_read(path, NULL);
    assert_non_null(l->text);
    int cap = 16;
    l->f = mem_alloc(sizeof *l->f * (size_t)cap);
    for (char *line = strtok(l->text, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#') {
            l->tail = line;
            continue;
        }
        if (!strncmp(line, "row\t", 4))
            continue;
        if (l->n == cap)
            l->f = mem_realloc(l->f, sizeof *l->f * (size_t)(cap *= 2));
        char **f = l->f[l->n++];
        int k = 0;
        for (char *p = line; k < NFIELDS; k++) {
            f[k] = p;
            p = strchr(p, '\t');
            if (!p) {
                k++;
                break;
            }
            *p++ = 0;
        }
        if (k != NFIELDS)
            fail_msg("a listed line has %d fields, expected %d", k, NFIELDS);
    }
}

static void listing_free(Listing *l)
{
    free(l->text);
    free(l->f);
}

static Listing list_of(const char *name, ...)
{
    /* the arguments after name: kvx-peers's, NULL-terminated */
    const char *args[24];
    int n = 0;
    va_list ap;
    va_start(ap, name);
    while (n < 23 && (args[n] = va_arg(ap, const char *)))
        n++;
    va_end(ap);
    for (; n < 24; n++)
        args[n] = NULL;
    char out[64], err[64];
    snprintf(out, sizeof out, "%s.tsv", name);
    snprintf(err, sizeof err, "%s.err", name);
    int rc = peers(tmp_path(out), tmp_path(err), args[0], args[1], args[2], args[3], args[4], args[5], args[6],
                   args[7], args[8], args[9], args[10], args[11], NULL);
    if (rc != 0) {
        dump(tmp_path(err));
        fail_msg("kvx-peers %s ... exited %d", args[0], rc);
    }
    Listing l;
    listing_read(tmp_path(out), &l);
    return l;
}

/* ---- kvx's own path, independently ------------------------------------------------------ */

typedef struct Kvx {
    Spec *s;
    Plan p;
    PlanRef r;
    MeasureSettings m;
} Kvx;

static void kvx_open(Kvx *k, const char *spec, int set_seed, uint64_t seed)
{
    KvxError err = {0};
    DeviceFacts f;
    memset(k, 0, sizeof *k);
    assert_int_equal(facts_for_arch("sm_90", &f), 0);
    k->s = spec_load(spec, &err);
    if (!k->s || plan_build(k->s, &f, &k->p, &err) || plan_ref_build(&k->p, &k->r, &err))
        fail_msg("%s: %s", spec, err.msg);
    k->m = k->s->measure;
    if (set_seed)
        k->m.seed = seed;
}

static void kvx_close(Kvx *k)
{
    plan_ref_free(&k->r);
    plan_free(&k->p);
    spec_free(k->s);
}

/* The point labelled label, resolved as kvx run resolves it for a worker. */
static void kvx_resolve(Kvx *k, const char *label, CaseDesc *c)
{
    int point = -1;
    for (int i = 0; i < k->p.npoints && point < 0; i++) {
        char *l = plan_point_label(&k->p, i, ~0ULL);
        if (!strcmp(l, label))
            point = i;
        free(l);
    }
    if (point < 0)
        fail_msg("no point '%s' in %s", label, k->s->path);
    Resolver rv = {&k->p, &k->r, &k->m, 0};
    ResolveCase rc = {.point = point};
    double metrics[3];
    KvxError err = {0};
    if (resolve_case(&rv, &rc, c, metrics, &err) != 0)
        fail_msg("%s: %s", label, err.msg);
}

static int buf_of(const CaseDesc *c, const char *name)
{
    for (int b = 0; b < c->nbufs; b++)
        if (!strcmp(c->bufs[b].name, name))
            return b;
    fail_msg("no buffer '%s'", name);
    return -1;
}

/* The input as a worker generates it. */
static void *kvx_input(const CaseDesc *c, const char *name)
{
    const CaseBuf *b = &c->bufs[buf_of(c, name)];
    const ElemType *t = &elem_types[b->type];
    void *data = mem_alloc(b->count * (uint64_t)t->size);
    KvxError err = {0};
    if (inputs_fill(t, data, b->count, &b->init, 2, &err) != 0)
        fail_msg("inputs_fill: %s", err.msg);
    return data;
}

/* kvx's host reference of the case's check over the given inputs (by buffer). */
static void kvx_reference(const CaseDesc *c, void *const *host, Expected *exp)
{
    const CaseCheck *k = &c->checks[0];
    const CaseBuf *out = &c->bufs[k->buf];
    RefArg args[CASE_MAX_REFARGS];
    memcpy(args, k->args, sizeof args);
    for (int j = 0; j < k->nargs; j++)
        if (args[j].is_buf) {
            args[j].t = &elem_types[c->bufs[k->argbuf[j]].type];
            args[j].data = host[k->argbuf[j]];
            args[j].count = c->bufs[k->argbuf[j]].count;
        }
    KvxError err = {0};
    memset(exp, 0, sizeof *exp);
    if (verify_reference(k->ref, args, k->nargs, &elem_types[out->type], out->count, exp, &err) != 0)
        fail_msg("reference %s: %s", k->ref, err.msg);
}

static uint64_t elem_at(const ElemType *t, const void *data, uint64_t i)
{
    return t->size == 1 ? ((const uint8_t *)data)[i] : t->size == 2 ? ((const uint16_t *)data)[i]
                                                                   : ((const uint32_t *)data)[i];
}

/* CUB's binnings of an unsigned input, from a listed levels field:
 * HistogramEven's (v - lower) * bins / (upper - lower) for lower <= v < upper,
 * HistogramRange's last level at or below v for levels[0] <= v < levels[bins].
 * 1 when every bin equals the reference's count. */
static int cub_bins_match(const char *levels, const ElemType *t, const void *data, uint64_t n, const Expected *exp)
{
    uint64_t bins = exp->count;
    uint64_t *h = mem_calloc(bins, sizeof *h);
    long long lv[5000];
    int nl = 0;
    if (!strncmp(levels, "even:", 5)) {
        long long lower, upper, num;
        assert_int_equal(sscanf(levels, "even:%lld:%lld:%lld:", &lower, &upper, &num), 3);
        assert_int_equal(num, (long long)bins + 1);
        for (uint64_t i = 0; i < n; i++) {
            long long v = (long long)elem_at(t, data, i);
            if (v >= lower && v < upper)
                h[(v - lower) * (long long)bins / (upper - lower)]++;
        }
    } else {
        assert_memory_equal(levels, "range:", 6);
        for (const char *p = levels + 6; *p && *p != ':'; nl++) {
            char *end;
            assert_true(nl < 5000);
            lv[nl] = strtoll(p, &end, 10);
            assert_true(end != p);
            assert_true(nl == 0 || lv[nl] >= lv[nl - 1]);
            p = *end == ',' ? end + 1 : end;
        }
        assert_int_equal(nl, (int)bins + 1);
        for (uint64_t i = 0; i < n; i++) {
            long long v = (long long)elem_at(t, data, i);
            if (v < lv[0] || v >= lv[nl - 1])
                continue;
            int lo = 0, hi = nl - 1; /* the last level <= v: lv[lo] <= v < lv[hi] */
            while (hi - lo > 1) {
                int mid = (lo + hi) / 2;
                if (lv[mid] <= v)
                    lo = mid;
                else
                    hi = mid;
            }
            h[lo]++;
        }
    }
    int same = 1;
    for (uint64_t b = 0; b < bins; b++)
        same &= h[b] == exp->u[b];
    free(h);
    return same;
}

/* The last input generated, by kvx's key: lines of one row, and rows of one
 * input, follow each other. */
static struct {
    char key[65];
    void *data;
    char hash[32];
} last;

static void last_free(void)
{
    free(last.data);
    memset(&last, 0, sizeof last);
}

/* Check the listed line's key and hash against kvx's generation of its
 * point's input; returns the input (kept until last_free) and c. */
static void *check_input(Kvx *k, char **f, CaseDesc *c)
{
    kvx_resolve(k, f[F_POINT], c);
    const CaseBuf *b = &c->bufs[buf_of(c, f[F_INPUT])];
    assert_string_equal(f[F_KEY], b->input_key);
    assert_string_equal(f[F_TYPE], elem_types[b->type].name);
    assert_int_equal(strtoull(f[F_COUNT], NULL, 10), b->count);
    if (strcmp(last.key, b->input_key)) {
        last_free();
        memcpy(last.key, b->input_key, 65);
        last.data = kvx_input(c, f[F_INPUT]);
        snprintf(last.hash, sizeof last.hash, "%016llx",
                 (unsigned long long)hidx_hash(last.data, b->count * (uint64_t)elem_types[b->type].size));
    }
    assert_string_equal(f[F_HASH], last.hash);
    return last.data;
}

/* Every histogram line: its input is kvx's, and its levels bin as histogram()
 * does (expect_even: whether HistogramEven's must; NULL: always). */
static void check_histogram_lines(const char *spec, const Listing *l, int (*expect_even)(const char *point))
{
    Kvx k;
    kvx_open(&k, spec, 0, 0);
    CaseDesc *c = mem_alloc(sizeof *c);
    for (int i = 0; i < l->n; i++) {
        char **f = l->f[i];
        void *data = check_input(&k, f, c);
        void *host[CASE_MAX_BUFS] = {0};
        const int in = buf_of(c, f[F_INPUT]);
        host[in] = data;
        Expected exp;
        kvx_reference(c, host, &exp);
        const int even = !strcmp(f[F_PEER], "cub_even");
        assert_true(even || !strcmp(f[F_PEER], "cub_range"));
        const int want = even && expect_even ? expect_even(f[F_POINT]) : 1;
        const int got = cub_bins_match(f[F_LEVELS], &elem_types[c->bufs[in].type], data, c->bufs[in].count, &exp);
        if (got != want)
            fail_msg("%s %s: CUB's binning with %.60s %s histogram()", f[F_POINT], f[F_PEER], f[F_LEVELS],
                     got ? "matches" : "does not match");
        /* the peer's own host column says the same */
        if (strncmp(f[F_HOST], want ? "ok" : "mismatch", want ? 3 : 8))
            fail_msg("%s %s: the peer says '%s'", f[F_POINT], f[F_PEER], f[F_HOST]);
        verify_expected_free(&exp);
    }
    last_free();
    free(c);
    kvx_close(&k);
}

/* ---- the tests ------------------------------------------------------------------------ */

static void test_histogram_rows_are_kvx_points(void **state)
{
    Listing l = list_of("hist", SPECS "histogram.yaml", "--list", "--where", "size == \"10M_elems\"", NULL);
    /* 3 bins x 5 dists, less text at 4096 bins (text is bytes); two peers each */
    assert_int_equal(l.n, 28);
    for (int i = 0; i < l.n; i++) {
        /* a row stands at the spec's baseline point */
        assert_memory_equal(l.f[i][F_POINT], "strategy=global ", 16);
        assert_string_equal(l.f[i][F_PEER], i % 2 ? "cub_range" : "cub_even");
    }
    /* text at 7 and at 256 bins is one input (u8, 10M, english): 13 distinct */
    assert_non_null(l.tail);
    assert_non_null(strstr(l.tail, "14 rows, 13 distinct inputs"));
    check_histogram_lines(SPECS "histogram.yaml", &l, NULL);
    listing_free(&l);
}

/* peer_hist.yaml's cases where lo + bins * width > hi + 1 and values above hi
 * are generated: HistogramEven's last bin takes them. */
static int even_exact(const char *point)
{
    return strstr(point, "case=exact") || strstr(point, "case=below");
}

static void test_binning_edges(void **state)
{
    Listing l = list_of("edges", TSPECS "peer_hist.yaml", "--list", NULL);
    assert_int_equal(l.n, 10);
    check_histogram_lines(TSPECS "peer_hist.yaml", &l, even_exact);
    /* empty_last: width 2 over 0..4 in 4 bins; the last bin (6..7) lies past
     * hi, so HistogramRange's last two levels are both hi + 1 */
    int seen = 0;
    for (int i = 0; i < l.n; i++)
        if (strstr(l.f[i][F_POINT], "case=empty_last") && !strcmp(l.f[i][F_PEER], "cub_range")) {
            assert_string_equal(l.f[i][F_LEVELS], "range:0,2,4,5,5:int");
            seen++;
        } else if (strstr(l.f[i][F_POINT], "case=wide") && !strcmp(l.f[i][F_PEER], "cub_even")) {
            /* u16 levels for u16 samples: 32-bit bin arithmetic in CUB */
            assert_string_equal(l.f[i][F_LEVELS], "even:100:60100:1001:u16");
            seen++;
        }
    assert_int_equal(seen, 2);
    /* exact and tail are both u8 uniform 0..255 of 100000: one input */
    assert_non_null(strstr(l.tail, "5 rows, 4 distinct inputs"));
    listing_free(&l);
}

static void test_contention_rows(void **state)
{
    Listing l = list_of("cont", SPECS "contention.yaml", "--list", "--where", "n == 2^24", NULL);
    /* counter (2) x hit_rate (6), at one counter and a compile-time address */
    assert_int_equal(l.n, 24);
    Kvx k;
    kvx_open(&k, SPECS "contention.yaml", 0, 0);
    CaseDesc *c = mem_alloc(sizeof *c);
    void *addr = NULL; /* all 0 at one counter: the same for every row here */
    int u32 = 0, u64 = 0;
    for (int i = 0; i < l.n; i++) {
        char **f = l.f[i];
        assert_memory_equal(f[F_POINT], "strategy=naive ", 15);
        assert_non_null(strstr(f[F_POINT], " address=const counters=1 "));
        assert_string_equal(f[F_PEER], i % 2 ? "cub_reduce" : "thrust_count_if");
        u32 += strstr(f[F_POINT], "counter=u32") != NULL;
        u64 += strstr(f[F_POINT], "counter=u64") != NULL;
        void *data = check_input(&k, f, c);
        /* the threshold is round(hit_rate * 1000), the check's, at the output's type */
        double hit = strtod(strstr(f[F_POINT], "hit_rate=") + 9, NULL);
        char want[64];
        snprintf(want, sizeof want, "below:%lld:%s", (long long)llround(hit * 1000),
                 elem_types[c->bufs[c->checks[0].buf].type].name);
        assert_string_equal(f[F_LEVELS], want);
        /* in[i] < thr over the input is kvx's count_below_by(in, thr, addr, 1) */
        void *host[CASE_MAX_BUFS] = {0};
        host[buf_of(c, "in")] = data;
        host[buf_of(c, "addr")] = addr = addr ? addr : kvx_input(c, "addr");
        Expected exp;
        kvx_reference(c, host, &exp);
        const int32_t *in = data;
        uint64_t count = 0;
        for (uint64_t j = 0; j < c->bufs[buf_of(c, "in")].count; j++)
            count += in[j] < llround(hit * 1000);
        assert_int_equal(exp.count, 1);
        assert_int_equal(exp.u[0], count);
        assert_string_equal(f[F_HOST], "ok");
        verify_expected_free(&exp);
    }
    free(addr);
    last_free();
    assert_int_equal(u32, 12);
    assert_int_equal(u64, 12);
    /* one input of 2^24 for all 12 rows (and addr beside it, as a worker makes) */
    assert_non_null(strstr(l.tail, "12 rows, 1 distinct inputs of the calls (2 input buffers generated)"));
    free(c);
    kvx_close(&k);
    listing_free(&l);
}

/* --seed is kvx run's: the input is the one a run with that seed measures. */
static void test_seed_override(void **state)
{
    const char *where = "bins == 256 && dist == \"uniform\" && size == \"10M_elems\"";
    Listing a = list_of("seed1", SPECS "histogram.yaml", "--list", "--where", where, NULL);
    Listing b = list_of("seed7", SPECS "histogram.yaml", "--list", "--where", where, "--seed", "7", NULL);
    assert_int_equal(a.n, 2);
    assert_int_equal(b.n, 2);
    assert_string_not_equal(a.f[0][F_KEY], b.f[0][F_KEY]);
    assert_string_not_equal(a.f[0][F_HASH], b.f[0][F_HASH]);
    Kvx k;
    kvx_open(&k, SPECS "histogram.yaml", 1, 7);
    CaseDesc *c = mem_alloc(sizeof *c);
    check_input(&k, b.f[0], c);
    last_free();
    free(c);
    kvx_close(&k);
    listing_free(&a);
    listing_free(&b);
}

/* The CSV imports as a reference whose axes line up with the spec's. */
static void test_csv_imports_as_reference(void **state)
{
    const char *csv = tmp_path("peers-histogram.csv"), *db = tmp_path("peers.db");
    int rc = peers(tmp_path("csv.out"), tmp_path("csv.err"), SPECS "histogram.yaml", "--list", "--where",
                   "size == \"10M_elems\" && bins == 7", "--out", csv, NULL);
    if (rc != 0) {
        dump(tmp_path("csv.err"));
        fail_msg("kvx-peers --list --out exited %d", rc);
    }
    char *text = file_read(csv, NULL);
    assert_non_null(text);
    /* the comment names the GPU, the date, CUB's version and the command */
    assert_memory_equal(text, "# kvx-peers: GPU ", 17);
    assert_non_null(strstr(text, "CUB_VERSION "));
    assert_non_null(strstr(text, "command: kvx-peers "));
    assert_non_null(strstr(text, "\nstrategy,bins,dist,size,median_ms,min_ms,max_ms,mean_ms,stdev_ms,noise,bytes,"));
    free(text);
    rc = kvx(tmp_path("import.log"), "import", csv, "--name", "cub_histogram", "--spec", "histogram", "--gpu",
             "none", "--db", db, NULL);
    if (rc != 0) {
        dump(tmp_path("import.log"));
        fail_msg("kvx import exited %d", rc);
    }
    assert_int_equal(db_int(db, "SELECT COUNT(*) FROM cases c JOIN runs r ON r.id = c.run_id "
                                "WHERE r.kind = 'reference' AND r.name = 'cub_histogram'"), 10);
    /* kvx's axis values: bins a number, the spec's strings as they are */
    assert_int_equal(db_int(db, "SELECT COUNT(*) FROM cases WHERE json_extract(axes, '$.bins') = 7 AND "
                                "json_extract(axes, '$.size') = '10M_elems' AND "
                                "json_extract(axes, '$.strategy') IN ('cub_even', 'cub_range')"), 10);
    /* the spec's metrics at the point: n * sizeof(E) + bins * 4, and n */
    assert_int_equal(db_int(db, "SELECT bytes FROM cases WHERE json_extract(axes, '$.dist') = 'zipf' AND "
                                "json_extract(axes, '$.strategy') = 'cub_even'"), 10000000 + 7 * 4);
    assert_int_equal(db_int(db, "SELECT elements FROM cases WHERE json_extract(axes, '$.dist') = 'text' AND "
                                "json_extract(axes, '$.strategy') = 'cub_range'"), 10000000);
    /* not measured: no time, status skipped */
    assert_int_equal(db_int(db, "SELECT COUNT(*) FROM cases WHERE status = 'skipped' AND median_ms IS NULL"), 10);
    /* the spec's where: works on the reference's axes */
    rc = kvx(tmp_path("table.log"), "table", "--db", db, "--spec", "histogram", "--ref", "cub_histogram", "--rows",
             "bins,dist", "--cols", "strategy", "--where", "size == \"10M_elems\" && bins == 7", NULL);
    if (rc != 0 || !log_has(tmp_path("table.log"), "| bins | dist | cub_even | cub_range |")) {
        dump(tmp_path("table.log"));
        fail_msg("kvx table --ref exited %d", rc);
    }
}

static void test_refuses(void **state)
{
    /* copy.yaml checks out: in, no host reference */
    assert_int_equal(peers(tmp_path("bad1.out"), tmp_path("bad1.err"), TSPECS "copy.yaml", "--list", NULL), 2);
    assert_true(log_has(tmp_path("bad1.err"), "no peer"));
    assert_int_equal(peers(tmp_path("bad2.out"), tmp_path("bad2.err"), SPECS "histogram.yaml", "--list",
                           "--where", "dist == \"unifrom\"", NULL), 2);
    assert_true(log_has(tmp_path("bad2.err"), "--where:1:9: axis 'dist' has no value \"unifrom\""));
    assert_int_equal(peers(tmp_path("bad3.out"), tmp_path("bad3.err"), SPECS "histogram.yaml", "--samples", "0",
                           NULL), 2);
    assert_true(log_has(tmp_path("bad3.err"), "--samples is '0' (expected a whole number >= 1)"));
    /* counters > 1: no library count to stand beside */
    assert_int_equal(peers(tmp_path("bad4.out"), tmp_path("bad4.err"), SPECS "contention.yaml", "--list",
                           "--where", "counters == 8", NULL), 2);
    assert_true(log_has(tmp_path("bad4.err"), "no row to measure"));
}

int main(void)
{
    if (child_dir_make("kvx-peers"))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_histogram_rows_are_kvx_points),
        cmocka_unit_test(test_binning_edges),
        cmocka_unit_test(test_contention_rows),
        cmocka_unit_test(test_seed_override),
        cmocka_unit_test(test_csv_imports_as_reference),
        cmocka_unit_test(test_refuses),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    return child_dir_done(failed);
}

#else

int main(void)
{
    printf("skipped: kvx-peers is not built (no CUDA compiler when cmake configured; bench/CMakeLists.txt)\n");
    return 77;
}

#endif
