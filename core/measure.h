/* measure: the settings of a case's measurement, one table for every place
 * they are spelled.
 *
 * MEASURE_SETTINGS is the table: each row is a field of MeasureSettings with
 * its spec key (`measure:`), its `kvx run` flag, its kind, its range, its
 * default and its help.  The defaults (measure_defaults), the spec loader
 * (gen/spec_sections.c), the command line (cli/cmd_run.c), the JSON stored
 * with every run and hashed into every case key (measure_json) and the
 * settings table of docs/measurement.md (held to it by test_measure) all come
 * from it, so a value is accepted by the spec exactly when the flag accepts it.
 *
 * The row order is the order of measure_json's keys: changing it changes every
 * case key, and stored runs would no longer resume. */
#ifndef KVX_MEASURE_H
#define KVX_MEASURE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

enum { MEASURE_FLUSH_OFF = 0, MEASURE_FLUSH_READ = 1, MEASURE_FLUSH_WRITE = 2 };

typedef enum {
    MEASURE_INT,        /* a whole number in [lo, hi]: int */
    MEASURE_DOUBLE,     /* a finite number in [lo, hi]: double */
    MEASURE_U64,        /* a whole number below 2^64: uint64_t */
    MEASURE_FLUSH,      /* read, write or off (a spec also says true or false): int */
} MeasureKind;

/* X(field, spec key, flag, kind, lo, hi, default, ARG, help) */
#define MEASURE_SETTINGS(X)                                                                                 \
    X(warmup, "warmup", "warmup", MEASURE_INT, 0, 1e9, 1, "N",                                             \
      "at most N untimed launches after the verified one")                                                 \
    X(min_samples, "min_samples", "min-samples", MEASURE_INT, 1, 1e9, 10, "N", "at least N timed samples") \
    X(max_samples, "max_samples", "max-samples", MEASURE_INT, 1, 1e9, 200, "N",                            \
      "at most N (raised to the minimum when below it)")                                                   \
    X(noise, "noise", "noise", MEASURE_DOUBLE, 0, INFINITY, 0.02, "X",                                     \
      "stop when (p75-p25)/median <= X")                    \
    X(budget_ms, "budget_ms", "budget-ms", MEASURE_DOUBLE, 0, INFINITY, 2000, "X",                         \
      "per case: verified launch, warm-up and samples; a kernel slower than it is timed by its "         \
      "verified launch alone; 0: no budget")                                                                 \
    X(flush_l2, "flush_l2", "flush-l2", MEASURE_FLUSH, 0, 0, MEASURE_FLUSH_READ, NULL,                     \
      "before each sample, read (clean L2) or overwrite (dirty L2) a buffer of twice the L2 size")         \
    X(timeout_s, "timeout_s", "timeout", MEASURE_DOUBLE, 0.001, 1e6, 30, "S",                              \
      "seconds per case, then the worker is killed")                                                       \
    X(seed, "seed", "seed", MEASURE_U64, 0, 0, 1, "N", "input generation")                                 \
    X(warmup_ms, "warmup_ms", "warmup-ms", MEASURE_DOUBLE, 0, INFINITY, 10, "X",                           \
      "warm-up stops once X ms of launches ran, or at --warmup launches; 0: count only")                              \
    X(sample_batch, "sample_batch", "sample-batch", MEASURE_INT, 0, 1e9, 8, "N",                           \
      "samples per wait after the first min-samples (0 is 1)")

/* How a case is measured: the defaults, then a spec's `measure:`, then the
 * flags of `kvx run`; every run stores the settings in force. */
typedef struct MeasureSettings {
    int warmup;         /* untimed launches after the verified run */
    int min_samples;
    int max_samples;
    double noise;       /* target relative spread: (p75 - p25) / median; 0: none */
    double budget_ms;   /* ms, wall-clock budget for sampling one case; 0: none */
    int flush_l2;       /* MEASURE_FLUSH_*: what is done to L2 before each sample */
    double timeout_s;   /* s, one case, verification and sampling included */
    uint64_t seed;      /* input generation */
    double warmup_ms;   /* ms: warm-up stops at this much launch time or at
                           `warmup` launches, whichever comes first; 0: count only */
    int sample_batch;   /* samples enqueued per synchronisation after the first
                           min_samples (each between its own events); 1: wait
                           for every sample */
} MeasureSettings;

#define MEASURE_ID(field, ...) MEASURE_ID_##field,
typedef enum { MEASURE_SETTINGS(MEASURE_ID) MEASURE_COUNT } MeasureId;
#undef MEASURE_ID

typedef struct MeasureField {
    const char *field;  /* the C field, as in docs */
    const char *key;    /* the spec's measure: key */
    const char *flag;   /* the kvx run flag, without "--" */
    MeasureKind kind;
    double lo, hi;      /* range of MEASURE_INT and MEASURE_DOUBLE, both ends included */
    double def;         /* the default */
    const char *arg;    /* the value's name in the usage */
    const char *help;
    size_t at;          /* offsetof(MeasureSettings, field) */
} MeasureField;

extern const MeasureField measure_fields[MEASURE_COUNT];

void measure_defaults(MeasureSettings *m);

/* The field whose spec key or flag is name, or NULL. */
const MeasureField *measure_find(const char *name);

/* text as f's value into m: checked against f's kind and range.  0, or -1
 * with what a good value looks like in `expect` ("a whole number up to
 * 10^9").  MEASURE_FLUSH takes read, write, off, true or false. */
int measure_set(MeasureSettings *m, const MeasureField *f, const char *text, char *expect, size_t n);

/* What a good value of f looks like, as measure_set says it. */
void measure_expect(const MeasureField *f, char *buf, size_t n);

/* The settings made consistent once every layer is applied: max_samples
 * raised to min_samples, a sample_batch of 0 made 1. */
void measure_finish(MeasureSettings *m);

/* The fields of over that given[] marks (by MeasureId: the flags a user
 * gave) copied over m (a spec's settings), then measure_finish(m). */
void measure_override(MeasureSettings *m, const MeasureSettings *over, const int given[MEASURE_COUNT]);

/* "read", "write" or "off". */
const char *measure_flush_name(int flush);

/* m as the JSON stored with a run and hashed into every case key; malloc'd. */
char *measure_json(const MeasureSettings *m);

#endif
