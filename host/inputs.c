/* inputs: deterministic host-side generation of buffer contents.
 *
 * Element i is a pure function of (seed, kind, parameters, i).  Each kind draws
 * from one or two streams; stream s of a buffer has the key
 * K_s = mix(seed ^ STREAM[kind][s]) and its i-th draw is mix(K_s + i * GOLDEN),
 * mix being the splitmix64 finaliser.  No state carries from one element to the
 * next, so any split of the index range over threads writes the same bytes.
 *
 * Integer types: parameters are rounded to the nearest integer (halves away
 * from zero), values are computed exactly in 128 bits and saturated to the
 * type's range.  Float types: values are computed in double and rounded to the
 * type once (f16/bf16 through elem_set_f64, which rounds to odd first so the
 * result is the correctly rounded one).
 *
 * Bump INPUTS_VERSION whenever the bytes produced for some parameters change:
 * it is part of inputs_key(), so stale cached inputs are never reused. */
#include "inputs.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/pool.h"

#define INPUTS_VERSION "kvx-inputs-1"

__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

#define GOLDEN 0x9e3779b97f4a7c15ull

/* Fixed work granularity: chunk boundaries never depend on the thread count. */
enum { CHUNK = 1 << 16, ZIPF_TABLE_MAX = 1 << 24 };
/* A guide table of 2^16 buckets (256 KiB) stays in L2; larger ones turn each
 * lookup into a cache miss and are slower for the tail, measured. */
#define ZIPF_GUIDE_BITS 16

static const char *const kind_names[INIT_COUNT_] = {
    "const", "iota", "uniform", "zipf", "hot", "runs", "text",
};

/* Per-kind stream constants (arbitrary odd 64-bit values): two buffers with the
 * same seed but different kinds draw unrelated numbers. */
static const uint64_t stream_consts[INIT_COUNT_][2] = {
    {0x243f6a8885a308d3ull, 0x13198a2e03707345ull},
    {0xa4093822299f31d1ull, 0x082efa98ec4e6c89ull},
    {0x452821e638d01377ull, 0xbe5466cf34e90c6dull},
    {0xc0ac29b7c97c50ddull, 0x3f84d5b5b5470917ull},
    {0x9216d5d98979fb1bull, 0xd1310ba698dfb5adull},
    {0x2ffd72dbd01adfb7ull, 0xb8e1afed6a267e97ull},
    {0xba7c9045f12c7f99ull, 0x24a19947b3916cf7ull},
};

/* English letter frequencies in percent of letters (the widely reproduced table
 * of Lewand, "Cryptological Mathematics", 2000: a 8.167 ... z 0.074).  TEXT
 * draws a space with probability TEXT_SPACE and otherwise a letter with these
 * shares, so 'e' is 0.82 * 12.702% = 10.4% of all characters.  The draw maps the
 * top 16 bits of the hash through a 65536-entry table, so every share is exact
 * to within 2^-16. */
#define TEXT_SPACE 0.18
static const double letter_pct[26] = {
    8.167, 1.492, 2.782, 4.253, 12.702, 2.228, 2.015, 6.094, 6.966, 0.153,
    0.772, 4.025, 2.406, 6.749, 7.507,  1.929, 0.095, 5.987, 6.327, 9.056,
    2.758, 0.978, 2.360, 0.150, 1.974,  0.074,
};

static inline uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* [0, 1) with 53 random bits. */
static inline double unit(uint64_t h) { return (double)(h >> 11) * 0x1p-53; }

/* ---- zipf ------------------------------------------------------------------ */

/* Exact inverse CDF for n <= ZIPF_TABLE_MAX ranks: cdf[k] = P(rank <= k) in
 * units of 2^-64 (the last rank takes whatever is left), and a guide table over
 * the top bits of the draw so that the search usually spans one or two
 * entries (Chen and Asau's indexed search). */
typedef struct ZipfTable {
    uint64_t n;
    uint64_t *cdf;      /* n - 1 entries */
    uint32_t *guide;    /* nguide + 1 entries: first k with cdf[k] > bucket start */
    int guide_bits;
    double s;
    long double *block_sum; /* build scratch: per-chunk weight sums, then offsets */
    long double total;
} ZipfTable;

/* Rejection-inversion (Hörmann and Derflinger, "Rejection-inversion to generate
 * variates from monotone discrete distributions", 1996) for larger ranges, in
 * the formulation of Apache Commons RNG's RejectionInversionZipfSampler. */
typedef struct ZipfRej {
    double s, n, h_x1, h_n, sv;
} ZipfRej;

static double helper1(double x) { return fabs(x) > 1e-8 ? log1p(x) / x : 1 - x * (0.5 - x * (1.0 / 3 - 0.25 * x)); }
static double helper2(double x) { return fabs(x) > 1e-8 ? expm1(x) / x : 1 + x * 0.5 * (1 + x / 3 * (1 + 0.25 * x)); }
static double zr_h(const ZipfRej *z, double x) { return exp(-z->s * log(x)); }
static double zr_hint(const ZipfRej *z, double x)
{
    double lx = log(x);
    return helper2((1 - z->s) * lx) * lx;
}
static double zr_hinv(const ZipfRej *z, double x)
{
    double t = x * (1 - z->s);
    if (t < -1)
        t = -1; /* rounding guard: the exact value is never below -1 */
    return exp(helper1(t) * x);
}

static void zipf_rej_init(ZipfRej *z, double s, uint64_t n)
{
    z->s = s;
    z->n = (double)n;
    z->h_x1 = zr_hint(z, 1.5) - 1;
    z->h_n = zr_hint(z, z->n + 0.5);
    z->sv = 2 - zr_hinv(z, zr_hint(z, 2.5) - zr_h(z, 2));
}

/* Rank 0..n-1 for element hash h: attempt t uses its own draw mix(h + t*GOLDEN),
 * so the element stays a pure function of its index.  The expected number of
 * attempts is below 1.1 for every s > 0. */
static uint64_t zipf_rej_rank(const ZipfRej *z, uint64_t h)
{
    for (uint64_t t = 0;; t++) {
        double u = z->h_n + unit(mix(h + t * GOLDEN)) * (z->h_x1 - z->h_n);
        double x = zr_hinv(z, u);
        double k = floor(x + 0.5);
        if (k < 1)
            k = 1;
        else if (k > z->n)
            k = z->n;
        if (k - x <= z->sv || u >= zr_hint(z, k + 0.5) - zr_h(z, k))
            return (uint64_t)k - 1;
    }
}

static inline uint64_t zipf_table_rank(const ZipfTable *z, uint64_t x)
{
    uint64_t j = x >> (64 - z->guide_bits);
    uint64_t a = z->guide[j], b = z->guide[j + 1]; /* answer in [a, b] */
    if (a >= b)
        return a;  /* the common case in the head: the bucket holds one rank */
    /* Branchless search for the first k in [a, b) with x < cdf[k], b if none:
     * the outcome of each step is unpredictable, so a select beats a branch. */
    const uint64_t *base = z->cdf + a;
    uint64_t len = b - a;
    while (len > 1) {
        uint64_t half = len / 2;
        base = base[half - 1] <= x ? base + half : base;
        len -= half;
    }
    return (uint64_t)(base - z->cdf) + (*base <= x);
}

/* ---- the generator ---------------------------------------------------------- */

typedef struct Gen {
    const ElemType *t;
    InitParams p;
    uint64_t key[2];
    /* integer types: value range [lo, lo + range) before saturation */
    i128 ilo, ival, tmin, tmax;
    int sat;                       /* values may fall outside [tmin, tmax] */
    uint64_t range_lo, range_hi;   /* range = range_hi * 2^64 + range_lo, >= 1 */
    /* float types */
    double flo, fhi, fspan;
    ZipfTable *zt;
    ZipfRej zr;
    uint64_t zn;
    uint8_t *text;                 /* 65536-entry character table */
} Gen;

static inline uint64_t draw(const Gen *g, int s, uint64_t i) { return mix(g->key[s] + i * GOLDEN); }

/* floor(x * range / 2^64): the 128-bit multiply range reduction, bias below
 * range / 2^64. */
static inline i128 int_offset(const Gen *g, uint64_t x)
{
    i128 off = (i128)(((u128)x * g->range_lo) >> 64);
    if (g->range_hi)
        off += (i128)((u128)x * g->range_hi);
    return off;
}

static inline double float_uniform(const Gen *g, uint64_t x)
{
    double v = g->flo + g->fspan * unit(x);
    return v < g->fhi || g->fspan == 0 ? v : nextafter(g->fhi, -INFINITY);
}

static inline uint64_t zipf_rank(const Gen *g, uint64_t i)
{
    uint64_t h = draw(g, 0, i);
    return g->zt ? zipf_table_rank(g->zt, h) : zipf_rej_rank(&g->zr, h);
}

/* The element generators take the kind as an argument so that every call
 * site below, with a constant kind, compiles to its own switch-free loop. */
static inline __attribute__((always_inline)) i128 gen_int(const Gen *g, InitKind kind, uint64_t i)
{
    switch (kind) {
    case INIT_CONST: return g->ival;
    case INIT_IOTA: return g->ival + (i128)i;
    case INIT_UNIFORM: return g->ilo + int_offset(g, draw(g, 0, i));
    case INIT_ZIPF: return g->ilo + (i128)zipf_rank(g, i);
    case INIT_HOT:
        if (unit(draw(g, 1, i)) < g->p.fraction)
            return g->ival;
        return g->ilo + int_offset(g, draw(g, 0, i));
    case INIT_RUNS: return g->ilo + int_offset(g, draw(g, 0, i / (uint64_t)g->p.length));
    case INIT_TEXT: return g->text[draw(g, 0, i) >> 48];
    default: return 0;
    }
}

static inline __attribute__((always_inline)) double gen_float(const Gen *g, InitKind kind, uint64_t i)
{
    switch (kind) {
    case INIT_CONST: return g->p.value;
    case INIT_IOTA: return g->p.value + (double)i;
    case INIT_UNIFORM: return float_uniform(g, draw(g, 0, i));
    case INIT_ZIPF: return (double)(g->ilo + (i128)zipf_rank(g, i));
    case INIT_HOT:
        if (unit(draw(g, 1, i)) < g->p.fraction)
            return g->p.value;
        return float_uniform(g, draw(g, 0, i));
    case INIT_RUNS: return float_uniform(g, draw(g, 0, i / (uint64_t)g->p.length));
    case INIT_TEXT: return g->text[draw(g, 0, i) >> 48];
    default: return 0;
    }
}

typedef struct FillCtx {
    const Gen *g;
    void *host;
} FillCtx;

/* The saturation test is loop-invariant (g.sat) and skipped when the values
 * cannot leave the type's range. */
#define INT_LOOP(T, KIND)                                                       \
    do {                                                                        \
        T *o = (T *)host;                                                       \
        for (uint64_t i = b; i < e; i++) {                                      \
            i128 v = gen_int(&g, KIND, i);                                      \
            if (g.sat)                                                          \
                v = v < g.tmin ? g.tmin : v > g.tmax ? g.tmax : v;              \
            o[i] = (T)v;                                                        \
        }                                                                       \
    } while (0)

#define INT_WIDTHS(KIND)                                                        \
    do {                                                                        \
        switch (g.t->size) {                                                    \
        case 1: INT_LOOP(uint8_t, KIND); break;                                 \
        case 2: INT_LOOP(uint16_t, KIND); break;                                \
        case 4: INT_LOOP(uint32_t, KIND); break;                                \
        default: INT_LOOP(uint64_t, KIND); break;                               \
        }                                                                       \
    } while (0)

#define FLOAT_LOOP(KIND)                                                        \
    do {                                                                        \
        switch (g.t->id) {                                                      \
        case ET_F32:                                                            \
            for (uint64_t i = b; i < e; i++)                                    \
                ((float *)host)[i] = (float)gen_float(&g, KIND, i);             \
            break;                                                              \
        case ET_F64:                                                            \
            for (uint64_t i = b; i < e; i++)                                    \
                ((double *)host)[i] = gen_float(&g, KIND, i);                   \
            break;                                                              \
        default: /* f16, bf16: correctly rounded through the type table */     \
            for (uint64_t i = b; i < e; i++)                                    \
                elem_set_f64(g.t, host, i, gen_float(&g, KIND, i));             \
            break;                                                              \
        }                                                                       \
    } while (0)

#define BY_KIND(LOOP)                                                           \
    do {                                                                        \
        switch (g.p.kind) {                                                     \
        case INIT_CONST: LOOP(INIT_CONST); break;                               \
        case INIT_IOTA: LOOP(INIT_IOTA); break;                                 \
        case INIT_UNIFORM: LOOP(INIT_UNIFORM); break;                           \
        case INIT_ZIPF: LOOP(INIT_ZIPF); break;                                 \
        case INIT_HOT: LOOP(INIT_HOT); break;                                   \
        case INIT_RUNS: LOOP(INIT_RUNS); break;                                 \
        case INIT_TEXT: LOOP(INIT_TEXT); break;                                 \
        default: break;                                                         \
        }                                                                       \
    } while (0)

static void fill_chunk(void *ctx, uint64_t b, uint64_t e)
{
    const FillCtx *c = ctx;
    /* A local copy: stores through host cannot alias it, so its fields stay in
     * registers across the loop. */
    const Gen g = *c->g;
    void *host = c->host;
    if (g.t->is_float)
        BY_KIND(FLOAT_LOOP);
    else
        BY_KIND(INT_WIDTHS);
}

/* ---- threads ------------------------------------------------------------------ */

typedef struct Par {
    void (*fn)(void *ctx, uint64_t b, uint64_t e);
    void *ctx;
    uint64_t n, chunk;
    atomic_uint_fast64_t next;
} Par;

static void *par_worker(void *arg)
{
    Par *p = arg;
    for (;;) {
        uint64_t b = atomic_fetch_add(&p->next, p->chunk);
        if (b >= p->n)
            return NULL;
        p->fn(p->ctx, b, p->n - b < p->chunk ? p->n : b + p->chunk);
    }
}

/* Run fn over [0, n) in chunks of `chunk` on up to `threads` threads (the
 * caller's included).  A thread that cannot be created only costs speed. */
static void par_run(int threads, uint64_t n, uint64_t chunk,
                    void (*fn)(void *, uint64_t, uint64_t), void *ctx)
{
    Par p = {.fn = fn, .ctx = ctx, .n = n, .chunk = chunk};
    atomic_init(&p.next, 0);
    uint64_t nchunks = (n + chunk - 1) / chunk;
    int want = threads;
    if ((uint64_t)want > nchunks)
        want = (int)nchunks;
    pthread_t tid[256];
    int started = 0;
    for (int i = 1; i < want && i < 256; i++)
        if (pthread_create(&tid[started], NULL, par_worker, &p) == 0)
            started++;
    par_worker(&p);
    for (int i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
}

static int thread_count(int threads)
{
    if (threads > 0)
        return threads;
    return pool_cores();
}

/* ---- zipf table construction ----------------------------------------------------- */

/* Phase 1: each chunk stores its ranks' weights (as double bits, in the cdf
 * array that phase 3 overwrites) and their sum.  Each weight has a double's
 * precision; the sums run in long double so that the 2^24-term prefix keeps the
 * tail's tiny probabilities. */
static void zipf_block_sums(void *ctx, uint64_t b, uint64_t e)
{
    ZipfTable *z = ctx;
    long double sum = 0;
    for (uint64_t k = b; k < e; k++) {
        double w = pow((double)(k + 1), -z->s);
        sum += w;
        if (k < z->n - 1)
            memcpy(&z->cdf[k], &w, sizeof w);
    }
    z->block_sum[b / CHUNK] = sum;
}

/* Phase 3: cumulative weights scaled to 2^64. */
static void zipf_block_cdf(void *ctx, uint64_t b, uint64_t e)
{
    ZipfTable *z = ctx;
    long double cum = z->block_sum[b / CHUNK], scale = 0x1p64L / z->total;
    for (uint64_t k = b; k < e && k < z->n - 1; k++) {
        double w;
        memcpy(&w, &z->cdf[k], sizeof w);
        cum += w;
        long double c = cum * scale;
        z->cdf[k] = c >= 0x1p64L ? UINT64_MAX : (uint64_t)c;
    }
}

static void zipf_table_free(ZipfTable *z)
{
    if (!z)
        return;
    free(z->cdf);
    free(z->guide);
    free(z->block_sum);
    free(z);
}

static int zipf_guide_bits(uint64_t n)
{
    int bits = 1;
    while ((1ull << bits) < n && bits < ZIPF_GUIDE_BITS)
        bits++;
    return bits;
}

static ZipfTable *zipf_table_new(double s, uint64_t n, int threads)
{
    ZipfTable *z = mem_calloc(1, sizeof *z);
    z->n = n;
    z->s = s;
    uint64_t nblocks = (n + CHUNK - 1) / CHUNK;
    z->block_sum = mem_calloc(nblocks, sizeof *z->block_sum);
    z->cdf = mem_alloc((n > 1 ? n - 1 : 1) * sizeof *z->cdf);
    par_run(threads, n, CHUNK, zipf_block_sums, z);
    long double total = 0;
    for (uint64_t j = 0; j < nblocks; j++) {
        long double w = z->block_sum[j];
        z->block_sum[j] = total; /* now the weight before block j */
        total += w;
    }
    z->total = total;
    par_run(threads, n, CHUNK, zipf_block_cdf, z);

    z->guide_bits = zipf_guide_bits(n);
    uint64_t ng = 1ull << z->guide_bits;
    z->guide = mem_alloc((ng + 1) * sizeof *z->guide);
    uint64_t k = 0;
    for (uint64_t j = 0; j < ng; j++) {
        uint64_t start = j << (64 - z->guide_bits);
        while (k < n - 1 && z->cdf[k] <= start)
            k++;
        z->guide[j] = (uint32_t)k;
    }
    z->guide[ng] = (uint32_t)(n - 1);
    free(z->block_sum);
    z->block_sum = NULL;
    return z;
}

/* ---- parameters ------------------------------------------------------------------ */

static int kind_has_range(InitKind k)
{
    return k == INIT_UNIFORM || k == INIT_ZIPF || k == INIT_HOT || k == INIT_RUNS;
}

/* Round half away from zero and saturate far outside every type's range. */
static i128 round_i128(double d)
{
    if (d > 0x1p100)
        return (i128)1 << 100;
    if (d < -0x1p100)
        return -((i128)1 << 100);
    return (i128)round(d);
}

static void type_range(const ElemType *t, i128 *lo, i128 *hi)
{
    int bits = t->size * 8;
    if (t->is_signed) {
        *hi = ((i128)1 << (bits - 1)) - 1;
        *lo = -((i128)1 << (bits - 1));
    } else {
        *hi = ((i128)1 << bits) - 1;
        *lo = 0;
    }
}

/* lo..hi of a ranged kind: finite, ordered both as doubles and as the exact
 * integers the spec wrote (2^63-1 and 2^63-2 are one double). */
static int check_range(const ElemType *t, const InitParams *p, const char *kn, InputsAt *at,
                       KvxError *err)
{
    *at = isfinite(p->lo) ? INPUTS_AT_HI : INPUTS_AT_LO;
    if (!isfinite(p->lo) || !isfinite(p->hi)) {
        kvx_error_set(err, KVX_EINPUT, NULL, "%s: bounds must be finite (lo %g, hi %g)", kn, p->lo, p->hi);
        return -1;
    }
    *at = INPUTS_AT_LO;
    if (p->lo > p->hi || ((p->exact & 6) == 6 && p->ilo > p->ihi)) {
        if (p->lo > p->hi)
            kvx_error_set(err, KVX_EINPUT, NULL, "%s: lo (%g) > hi (%g)", kn, p->lo, p->hi);
        else
            kvx_error_set(err, KVX_EINPUT, NULL, "%s: lo (%lld) > hi (%lld)", kn, (long long)p->ilo,
                          (long long)p->ihi);
        return -1;
    }
    if (t->is_float && !isfinite(p->hi - p->lo)) {
        kvx_error_set(err, KVX_EINPUT, NULL, "%s: range %g..%g overflows a double", kn, p->lo, p->hi);
        return -1;
    }
    /* ranks are doubles inside the sampler: beyond 2^53 they stop being exact */
    if (p->kind == INIT_ZIPF && round_i128(p->hi) - round_i128(p->lo) + 1 > ((i128)1 << 53)) {
        kvx_error_set(err, KVX_EINPUT, NULL, "zipf: range %g..%g has more than 2^53 values", p->lo, p->hi);
        return -1;
    }
    return 0;
}

int inputs_check(const ElemType *t, const InitParams *p, InputsAt *at, KvxError *err)
{
    const char *kn = (unsigned)p->kind < INIT_COUNT_ ? kind_names[p->kind] : NULL;
    *at = INPUTS_AT_KIND;
    if (!kn) {
        kvx_error_set(err, KVX_EINPUT, NULL, "unknown init kind %d", (int)p->kind);
        return -1;
    }
    *at = INPUTS_AT_EXPONENT;
    if (p->kind == INIT_ZIPF && !(p->exponent > 0 && isfinite(p->exponent))) {
        kvx_error_set(err, KVX_EINPUT, NULL, "zipf: exponent must be > 0 (got %g)", p->exponent);
        return -1;
    }
    *at = INPUTS_AT_FRACTION;
    if (p->kind == INIT_HOT && !(p->fraction >= 0 && p->fraction <= 1)) {
        kvx_error_set(err, KVX_EINPUT, NULL, "hot: fraction must be in [0, 1] (got %g)", p->fraction);
        return -1;
    }
    *at = INPUTS_AT_LENGTH;
    if (p->kind == INIT_RUNS && p->length < 1) {
        kvx_error_set(err, KVX_EINPUT, NULL, "runs: length must be >= 1 (got %lld)",
                      (long long)p->length);
        return -1;
    }
    *at = INPUTS_AT_VALUE;
    int uses_value = p->kind == INIT_CONST || p->kind == INIT_IOTA || p->kind == INIT_HOT;
    if (uses_value && !t->is_float && isnan(p->value)) {
        kvx_error_set(err, KVX_EINPUT, NULL, "%s: value NaN for integer type %s", kn, t->name);
        return -1;
    }
    return kind_has_range(p->kind) ? check_range(t, p, kn, at, err) : 0;
}

static void text_table(uint8_t *lut)
{
    double cum = TEXT_SPACE;
    uint32_t prev = (uint32_t)llround(cum * 65536);
    memset(lut, ' ', prev);
    double letters = 0;
    for (int c = 0; c < 26; c++)
        letters += letter_pct[c];
    for (int c = 0; c < 26; c++) {
        cum += (1 - TEXT_SPACE) * letter_pct[c] / letters;
        uint32_t end = c == 25 ? 65536 : (uint32_t)llround(cum * 65536);
        memset(lut + prev, 'a' + c, end - prev);
        prev = end;
    }
}

/* g's parameters for fill(t, count, p): the stream keys, integer range and
 * saturation, float bounds.  p is valid (inputs_check). */
static void gen_setup(Gen *g, const ElemType *t, uint64_t count, const InitParams *p)
{
    memset(g, 0, sizeof *g);
    g->t = t;
    g->p = *p;
    for (int s = 0; s < 2; s++)
        g->key[s] = mix(p->seed ^ stream_consts[p->kind][s]);
    type_range(t, &g->tmin, &g->tmax);
    g->ival = p->exact & 1 ? (i128)p->ivalue : round_i128(p->value);
    i128 vmin = g->ival, vmax = g->ival;
    if (kind_has_range(p->kind)) {
        g->ilo = p->exact & 2 ? (i128)p->ilo : round_i128(p->lo);
        i128 ihi = p->exact & 4 ? (i128)p->ihi : round_i128(p->hi);
        u128 range = (u128)(ihi - g->ilo) + 1;
        g->range_lo = (uint64_t)range;
        g->range_hi = (uint64_t)(range >> 64);
        g->flo = p->lo;
        g->fhi = p->hi;
        g->fspan = p->hi - p->lo;
        if (p->kind == INIT_HOT) {
            vmin = g->ilo < vmin ? g->ilo : vmin;
            vmax = ihi > vmax ? ihi : vmax;
        } else {
            vmin = g->ilo;
            vmax = ihi;
        }
    }
    if (p->kind == INIT_IOTA)
        vmax = g->ival + (i128)count;
    g->sat = p->kind != INIT_TEXT && (vmin < g->tmin || vmax > g->tmax);
}

int inputs_fill(const ElemType *t, void *host, uint64_t count, const InitParams *p,
                int threads, KvxError *err)
{
    InputsAt at;
    if (inputs_check(t, p, &at, err) < 0)
        return -1;
    threads = thread_count(threads);
    Gen g;
    gen_setup(&g, t, count, p);
    if (p->kind == INIT_ZIPF) {
        g.zn = (uint64_t)(round_i128(p->hi) - g.ilo + 1);
        if (g.zn <= ZIPF_TABLE_MAX)
            g.zt = zipf_table_new(p->exponent, g.zn, threads);
        else
            zipf_rej_init(&g.zr, p->exponent, g.zn);
    }
    if (p->kind == INIT_TEXT) {
        g.text = mem_alloc(65536);
        text_table(g.text);
    }
    FillCtx c = {.g = &g, .host = host};
    par_run(threads, count, CHUNK, fill_chunk, &c);
    zipf_table_free(g.zt);
    free(g.text);
    return 0;
}

static void put_i128(uint64_t w[2], i128 v)
{
    w[0] = (uint64_t)v;
    w[1] = (uint64_t)((u128)v >> 64);
}

/* zipf's part of the plan: 1, or 0 where the device cannot give the host's
 * bytes: past ZIPF_TABLE_MAX ranks (the rejection sampler's log and exp), or
 * a float type's values past 2^53 (their conversion would round). */
static int zipf_plan(const ElemType *t, const InitParams *p, const Gen *g, InputsPlan *plan)
{
    i128 ihi = round_i128(p->hi), big = (i128)1 << 53;
    uint64_t zn = (uint64_t)(ihi - g->ilo + 1);
    if (zn > ZIPF_TABLE_MAX || (t->is_float && (g->ilo < -big || ihi > big)))
        return 0;
    plan->zipf_n = zn;
    plan->zipf_s = p->exponent;
    plan->zipf_guide_bits = zipf_guide_bits(zn);
    return 1;
}

void inputs_table_make(InputsPlan *plan, int threads, InputsTable *tab)
{
    KVX_ASSERT(plan->kind == INIT_ZIPF && plan->zipf_n);
    ZipfTable *z = zipf_table_new(plan->zipf_s, plan->zipf_n, thread_count(threads));
    KVX_ASSERT((uint32_t)z->guide_bits == plan->zipf_guide_bits);
    tab->cdf = z->cdf;
    tab->guide = z->guide;
    tab->cdf_bytes = (plan->zipf_n > 1 ? plan->zipf_n - 1 : 1) * sizeof *z->cdf;
    tab->guide_bytes = ((1ull << z->guide_bits) + 1) * sizeof *z->guide;
    free(z);
    plan->zipf_cdf = (uint64_t)(uintptr_t)tab->cdf;
    plan->zipf_guide = (uint64_t)(uintptr_t)tab->guide;
}

void inputs_table_free(InputsTable *tab)
{
    free(tab->cdf);
    free(tab->guide);
    memset(tab, 0, sizeof *tab);
}

int inputs_plan(const ElemType *t, uint64_t count, const InitParams *p, InputsPlan *plan, KvxError *err)
{
    InputsAt at;
    if (inputs_check(t, p, &at, err) < 0)
        return -1;
    Gen g;
    gen_setup(&g, t, count, p);
    memset(plan, 0, sizeof *plan);
    if (p->kind == INIT_ZIPF && zipf_plan(t, p, &g, plan) == 0)
        return 0;
    memcpy(plan->key, g.key, sizeof plan->key);
    put_i128(plan->ilo, g.ilo);
    put_i128(plan->ival, g.ival);
    put_i128(plan->tmin, g.tmin);
    put_i128(plan->tmax, g.tmax);
    plan->range_lo = g.range_lo;
    plan->range_hi = g.range_hi;
    plan->length = p->kind == INIT_RUNS ? (uint64_t)p->length : 1;
    plan->value = p->value;
    plan->flo = g.flo;
    plan->fhi = g.fhi;
    plan->fhi_below = nextafter(g.fhi, -INFINITY);
    plan->fspan = g.fspan;
    plan->fraction = p->fraction;
    plan->kind = (uint32_t)p->kind;
    plan->type = (uint32_t)t->id;
    plan->sat = (uint32_t)g.sat;
    uint8_t *lut = mem_alloc(65536);
    text_table(lut);
    for (uint32_t j = 0, c = 0; j < 65536; j++)
        if (j == 65535 || lut[j + 1] != lut[j])
            plan->text_end[c++] = j + 1;
    free(lut);
    return 1;
}

static i128 get_i128(const uint64_t w[2]) { return (i128)(((u128)w[1] << 64) | w[0]); }

void inputs_fill_plan(const InputsPlan *plan, void *host, uint64_t count)
{
    Gen g;
    memset(&g, 0, sizeof g);
    KVX_ASSERT(plan->type < ET_COUNT && plan->kind < INIT_COUNT_);
    ZipfTable zt = {.n = plan->zipf_n, .cdf = (uint64_t *)(uintptr_t)plan->zipf_cdf,
                    .guide = (uint32_t *)(uintptr_t)plan->zipf_guide, .guide_bits = (int)plan->zipf_guide_bits};
    KVX_ASSERT(plan->kind != INIT_ZIPF || (zt.n && zt.cdf && zt.guide));
    g.t = &elem_types[plan->type];
    g.p.kind = (InitKind)plan->kind;
    g.p.value = plan->value;
    g.p.fraction = plan->fraction;
    g.p.length = (int64_t)plan->length;
    memcpy(g.key, plan->key, sizeof g.key);
    g.ilo = get_i128(plan->ilo);
    g.ival = get_i128(plan->ival);
    g.tmin = get_i128(plan->tmin);
    g.tmax = get_i128(plan->tmax);
    g.sat = (int)plan->sat;
    g.range_lo = plan->range_lo;
    g.range_hi = plan->range_hi;
    g.flo = plan->flo;
    g.fhi = plan->fhi;
    g.fspan = plan->fspan;
    uint8_t *lut = mem_alloc(65536);
    for (uint32_t j = 0, c = 0; j < 65536; j++) {
        while (c < 26 && j >= plan->text_end[c])
            c++;
        lut[j] = (uint8_t)(c ? 'a' + c - 1 : ' ');
    }
    g.text = lut;
    g.zt = plan->kind == INIT_ZIPF ? &zt : NULL;
    g.zn = plan->zipf_n;
    FillCtx ctx = {.g = &g, .host = host};
    if (count)
        fill_chunk(&ctx, 0, count);
    free(lut);
}

/* ---- description and key ------------------------------------------------------------ */

/* Shortest text that reads back as the same double. */
static void put_num(StrBuf *out, double v)
{
    char buf[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v || v != v)
            break;
    }
    sb_puts(out, buf);
}

static void put_range(StrBuf *out, const InitParams *p)
{
    put_num(out, p->lo);
    sb_puts(out, "..");
    put_num(out, p->hi);
}

void inputs_describe(const InitParams *p, StrBuf *out)
{
    if ((unsigned)p->kind >= INIT_COUNT_) {
        sb_printf(out, "init(%d)", (int)p->kind);
        return;
    }
    sb_printf(out, "%s(", kind_names[p->kind]);
    switch (p->kind) {
    case INIT_CONST:
    case INIT_IOTA: put_num(out, p->value); break;
    case INIT_UNIFORM: put_range(out, p); break;
    case INIT_ZIPF:
        sb_puts(out, "s=");
        put_num(out, p->exponent);
        sb_puts(out, ", ");
        put_range(out, p);
        break;
    case INIT_HOT:
        sb_puts(out, "f=");
        put_num(out, p->fraction);
        sb_puts(out, ", v=");
        put_num(out, p->value);
        sb_puts(out, ", ");
        put_range(out, p);
        break;
    case INIT_RUNS:
        sb_printf(out, "L=%lld, ", (long long)p->length);
        put_range(out, p);
        break;
    case INIT_TEXT: sb_puts(out, "english"); break;
    default: break;
    }
    sb_putc(out, ')');
}

/* Only what changes the bytes goes into the key (a constant ignores lo, hi and
 * the seed), so equal inputs are shared as widely as possible.  Doubles go in
 * as %a: exact, and independent of the locale's decimal point. */
void inputs_key(const ElemType *t, uint64_t count, const InitParams *p, char hex[65])
{
    StrBuf b;
    sb_init(&b);
    unsigned k = (unsigned)p->kind;
    sb_printf(&b, "%s\ntype=%s\ncount=%llu\nkind=%s\n", INPUTS_VERSION, t->name,
              (unsigned long long)count, k < INIT_COUNT_ ? kind_names[k] : "?");
    if (k == INIT_CONST || k == INIT_IOTA || k == INIT_HOT)
        sb_printf(&b, "value=%a\n", p->value);
    if (kind_has_range(p->kind))
        sb_printf(&b, "lo=%a\nhi=%a\n", p->lo, p->hi);
    if (k == INIT_ZIPF)
        sb_printf(&b, "exponent=%a\n", p->exponent);
    if (k == INIT_HOT)
        sb_printf(&b, "fraction=%a\n", p->fraction);
    if (k == INIT_RUNS)
        sb_printf(&b, "length=%lld\n", (long long)p->length);
    if (k != INIT_CONST && k != INIT_IOTA)
        sb_printf(&b, "seed=%llu\n", (unsigned long long)p->seed);
    if (p->exact)
        sb_printf(&b, "exact=%u:%lld:%lld:%lld\n", p->exact, (long long)p->ivalue, (long long)p->ilo,
                  (long long)p->ihi);
    sha256_hex(b.p, b.len, hex);
    sb_free(&b);
}
