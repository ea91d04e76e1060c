/* counters: hardware counters per case, from Nsight Compute, in a pass of
 * their own after the timed samples (a profiler replays each kernel several
 * times and must never touch a timed launch).
 *
 * The cases go to a file; `ncu ... kvx __counters DEVICE FILE` runs each of
 * them once (worker_counters_main: one launch of the case's kernel, no flush,
 * no reference), and ncu's CSV has one row per launch, in order.  The rows
 * are matched to the cases by that order and by the kernel's name; a pass
 * whose rows do not match stores nothing.  A case of several kernels has a
 * row per kernel: its counters are their sum, the sequence's, as its time. */
#ifndef KVX_COUNTERS_H
#define KVX_COUNTERS_H

#include "run.h"
#include "host/case.h"

/* `--counters default`: the metrics of kvx's atomics studies, each also
 * stored in a fixed column of its own (cases.l2_atom_requests, ...), which
 * databases before cases.counters_json hold. */
#define COUNTERS(X)                                                                       \
    X(l2_atom_requests, "lts__t_requests_srcunit_tex_op_atom.sum", "L2 requests of global atomics (ATOM)") \
    X(l2_red_requests, "lts__t_requests_srcunit_tex_op_red.sum", "L2 requests of global reductions (RED)") \
    X(dram_read_bytes, "dram__bytes_read.sum", "bytes read from device memory")           \
    X(dram_write_bytes, "dram__bytes_write.sum", "bytes written to device memory")

typedef enum {
#define X(name, metric, doc) COUNTER_##name,
    COUNTERS(X)
#undef X
    COUNTER_COUNT
} CounterId;

extern const char *const counter_names[COUNTER_COUNT];
extern const char *const counter_metrics[COUNTER_COUNT];

/* CounterList and counters_list_parse (`--counters`' value, where
 * `default` stands for COUNTERS' four) are run.h's. */

/* The list as ncu's --metrics takes it, "a,b,c", appended to b. */
void counters_list_join(const CounterList *l, StrBuf *b);

/* The CounterId of metric, or -1 when it fills no fixed column. */
int counters_fixed(const char *metric);

/* Nsight Compute's ncu: $KVX_NCU, the toolkit's bin, then PATH.  Static
 * string, or NULL. */
const char *counters_find_ncu(void);

/* Profile the n cases on GPU device: vals[i * l->n + k] gets metric k of
 * case i (NaN where a row or a value is missing).  With rep (a path ending
 * in .ncu-rep) ncu's report is written there and kept, and the values are
 * read back from it.  The cases profiled (a prefix: the pass stops at a case
 * that cannot run), with err set when fewer than n; or -1 with err (no ncu,
 * ncu could not start, rows that do not match the cases). */
int counters_collect(const CaseDesc *cases, int n, int device, const CounterList *l, const char *rep,
                     double *vals, KvxError *err);

/* ncu's CSV log (--csv --page raw; changed in place) into vals (as
 * counters_collect's): one row per launch in order, each row's kernel checked
 * against its case's, metrics by their column names.  The rows read, or -1
 * with err (no table, a row that is not its case's kernel). */
int counters_parse(char *text, const CaseDesc *cases, int n, const CounterList *l, double *vals,
                   KvxError *err);

#endif
