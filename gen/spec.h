/* spec: a YAML spec (schema 1) loaded into memory, every node checked.
 *
 * The loader is the only place that reads YAML.  It checks keys, types, axis
 * names in expressions and the presence of the template, so that later stages
 * can assume a well-formed Spec.  Everything in a Spec lives in spec->arena.
 * docs/spec.md is the user-facing description of the schema. */
#ifndef KVX_SPEC_H
#define KVX_SPEC_H

#include "core/expr.h"
#include "core/measure.h"
#include "core/elem.h"
#include "facts.h"

#define SPEC_MAX_AXES 64   /* axis dependency sets are 64-bit masks */
/* Limits on input (docs/spec.md, Limits): each keeps a careless or hostile
 * spec from taking minutes or gigabytes, with a clear error instead. */
#define SPEC_MAX_FILE_BYTES (16u << 20)      /* a spec file */
#define SPEC_MAX_AXIS_VALUES 1000000         /* values of one axis */
#define SPEC_MAX_YAML_DEPTH 64               /* nesting of [ and { and blocks */

typedef struct AxisValue {
    Value v;
    const char *text;   /* as written, for names and messages */
    SrcPos pos;
} AxisValue;

typedef struct Axis {
    const char *name;
    AxisValue *vals;
    int nvals;
    int zip;            /* zip group id, -1 when the axis varies on its own */
    SrcPos pos;
} Axis;

/* `set:`: axis value -> variable bindings visible to templates and exprs. */
typedef struct SetEntry {
    int axis;
    int value;          /* index into axes[axis].vals */
    const char *var;
    Value v;
    SrcPos pos;
} SetEntry;

typedef struct Let {
    const char *name;
    Expr *e;
    SrcPos pos;
} Let;

typedef enum {
    INIT_CONST,         /* value */
    INIT_IOTA,          /* value = first element, i + value */
    INIT_UNIFORM,       /* lo..hi inclusive (ints) or [lo, hi) (floats) */
    INIT_ZIPF,          /* exponent, lo..hi: rank k drawn with p ~ 1/k^s */
    INIT_HOT,           /* fraction of elements == value, the rest uniform lo..hi */
    INIT_RUNS,          /* runs of `length` equal values, each uniform lo..hi */
    INIT_TEXT,          /* lowercase English-like letters and spaces */
    INIT_COUNT_
} InitKind;

typedef struct InitSpec {
    InitKind kind;
    Expr *value, *lo, *hi, *exponent, *fraction, *length;
    SrcPos pos;
    /* `init: {by: AXIS, VALUE: INIT, ...}` picks the initialiser by an axis's
     * value: by_axis >= 0 and alts[v] is the one for value v of that axis. */
    int by_axis;
    struct InitSpec *alts;
} InitSpec;

/* The initialiser that applies at a point (vals: value index per axis). */
const InitSpec *spec_init_at(const InitSpec *in, const int *vals);

typedef struct BufferSpec {
    const char *name;
    const char *type;   /* an element type name, or "$VAR" resolved per point */
    Expr *count;
    Expr *offset;       /* elements past a 256-byte boundary; NULL = 0 */
    InitSpec init;
    int checked;        /* named in check: reset to init before every launch */
    int scratch;        /* `scratch: true`: written and read by the launches only, neither an
                           input nor checked; reset to init before every launch, or never
                           written by kvx with `init: none` (uninit) */
    int uninit;         /* `init: none` (scratch only): its contents are whatever is there */
    SrcPos pos;
} BufferSpec;

/* One kernel launch.  `launch:` is one of these (a mapping) or a list of
 * them, run in order on the same buffers and timed together. */
#define SPEC_MAX_LAUNCHES 4
typedef struct LaunchSpec {
    const char *kernel;                    /* entry point; NULL: the spec's kernel: */
    Expr *when;                            /* NULL: always; else it runs where this holds */
    Expr *grid[3], *block[3], *cluster[3]; /* missing dims are NULL (= 1) */
    Expr *smem;                            /* dynamic shared memory, bytes */
    Expr **args;
    int nargs;
    SrcPos pos;
} LaunchSpec;

/* What a check compares an output with. */
typedef enum {
    CHECK_EXPR,         /* ref: a host reference call (core/refs.h), baseline(), or a scalar */
    CHECK_BUFFER,       /* ref names an input buffer: the output equals it (`out: in`) */
    CHECK_REFERENCE     /* `out: reference`: the reference kernel's output */
} CheckKind;

typedef struct CheckSpec {
    int buffer;         /* index into bufs */
    CheckKind kind;
    Expr *ref;          /* CHECK_EXPR, CHECK_BUFFER (the identifier) */
    int other;          /* CHECK_BUFFER: index of the buffer compared with */
    double rtol;        /* <0: the type's default (or the spec's tolerance:) */
    int order_any;      /* `order: any`: compared as multisets (the order written is free) */
    int length;         /* -1: the whole buffer; else `length: BUF`, the scalar output whose
                           value after the launch is how many leading elements are compared */
    SrcPos length_pos;
    SrcPos pos;
} CheckSpec;


typedef struct MetricsSpec {
    Expr *bytes;        /* bytes a variant must move: GB/s and % of peak */
    Expr *atomics;      /* atomic operations performed: atomics/s */
    Expr *elements;     /* elements processed: elements/s */
} MetricsSpec;

typedef struct BaselineEntry {
    int axis;
    int value;
} BaselineEntry;

/* `reference:`: the code every variant's outputs are compared with where a
 * check says `reference`.  Either a point of the code axes (npoint > 0: the
 * variant at this point with these axes set, as baseline: names them) or a
 * kernel of its own: an entry point in its own template (NULL: the spec's)
 * with its own launch (has_launch 0: the spec's).  It runs once per workload
 * point on the same inputs, untimed. */
typedef struct ReferenceSpec {
    int present;
    BaselineEntry *point; int npoint;
    const char *template_path;  /* resolved against the spec's dir; NULL: the spec's */
    const char *kernel;
    int has_launch;
    LaunchSpec launch;
    SrcPos pos;
} ReferenceSpec;

/* L2 before each sample.  READ (the default) reads a 2*L2 scratch buffer:
 * every line of the case's data is gone and what is left is clean, so the
 * timed kernel pays no write-back for it.  WRITE overwrites the buffer (a
 * memset), which also empties L2 of the case's data but leaves it full of
 * dirty lines that the timed kernel then writes back as it evicts them. */

typedef struct ReportTable {
    const char *title;
    const char **rows; int nrows;
    const char **cols; int ncols;
    const char *value;
    int ratio;          /* 1: divide by the baseline; 2: speed-up (baseline / value) */
    int best;           /* 1: per row, the best case and its runner-up (no cols) */
    const char *beside; /* best: "AXIS=V,...", cases shown beside the best (kvx table --beside) */
    int failed_values;  /* 1: a failed case's stored value (a timed mismatch) shows, marked */
    const char *where;
    BaselineEntry *baseline; int nbaseline; /* the table's own baseline: (overrides the spec's) */
    SrcPos pos;
} ReportTable;

/* A report plot (`report:` entry with `plot: AXIS`): value against x, one
 * series per value of series (NULL: kvx report picks), one plot per value
 * combination of panels (npanels -1: every other workload axis with several
 * values). */
typedef struct ReportPlot {
    const char *title;
    const char *x, *series;
    const char **panels; int npanels;
    const char *value;
    int ratio;          /* as ReportTable's */
    const char *where;
    SrcPos pos;
} ReportPlot;

typedef struct Spec {
    Arena *arena;
    const char *path;           /* as given */
    const char *dir;            /* directory of path, for relative paths */
    const char *name;
    const char *doc;
    const char *template_path;  /* resolved against dir */
    const char *kernel;

    Axis axes[SPEC_MAX_AXES];
    int naxes;
    int nzip;

    Expr **where; int nwhere;
    SetEntry *sets; int nsets;
    Let *lets; int nlets;
    BufferSpec *bufs; int nbufs;
    LaunchSpec *launches; int nlaunches;  /* in order; a point runs those whose when: holds */
    CheckSpec *checks; int nchecks;
    int differential;           /* compare every variant with the baseline */
    ReferenceSpec reference;
    double tolerance[ET_COUNT]; /* per element type; <0 = default */
    MetricsSpec metrics;
    BaselineEntry *baseline; int nbaseline;
    MeasureSettings measure;
    const char **options; int noptions;   /* extra NVRTC options */
    int use_cccl;               /* headers: [cccl] adds the CCCL include dir */
    ReportTable *tables; int ntables;
    ReportPlot *plots; int nplots;        /* report: entries with plot: */
} Spec;

/* Load and check a spec.  On error: NULL, err set with file:line:col and code
 * KVX_EINPUT. */
Spec *spec_load(const char *path, KvxError *err);
void spec_free(Spec *s);        /* accepts NULL */

int spec_axis_find(const Spec *s, const char *name);      /* -1 if none */
int spec_buffer_find(const Spec *s, const char *name);    /* -1 if none */
int spec_let_find(const Spec *s, const char *name);       /* -1 if none */

/* Every `AXIS == CONST` and `AXIS != CONST` in e (either way round; CONST a
 * literal or a name-free expression such as 2^24) names a value the axis has:
 * a typo in a compared value would otherwise make a branch or a constraint
 * silently never (or always) hold.  Numbers compare numerically (16M equals
 * 16777216).  A static walk of the tree, once per expression: 0, or -1 with err
 * at the constant ("axis 'pack' has no value \"scaler\" (expected one of: ...)"). */
int spec_check_axis_values(const Spec *s, const Expr *e, KvxError *err);


#endif
