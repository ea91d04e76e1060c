/* search_kt: a recorded space (search_db.h) in Kernel Tuner's cache-file
 * format, so that Kernel Tuner's strategies replay the same space in its
 * simulation mode (bench/kernel_tuner_replay.py) as `kvx replay` does. */
#ifndef KVX_SEARCH_KT_H
#define KVX_SEARCH_KT_H

#include "search_db.h"

#include <stdio.h>

/* Past this many combinations of the code axes' values the pruned ones are
 * not written (each is an entry of the file). */
#define SEARCH_KT_MAX_PRODUCT (1 << 20)

/* Write r (loaded from db under objective o) to f as Kernel Tuner 1.5 reads
 * a cache file (kernel_tuner/util.py, process_cache and read_cache):
 * device_name (device), kernel_name (the variants' entry points, '+'-joined;
 * the spec's name in a file before schema 5), problem_size ([the objective
 * points per variant]), tune_params_keys (the code axes), tune_params (their
 * declared values), objective "time", and one entry per variant keyed
 * "v1,v2,..." (Python's str of each value, joined by commas):
 *   time               the objective as a geometric mean over the points (ms
 *                      for a time; a rate's reciprocal, so that lower is
 *                      better as Kernel Tuner minimises), or the error of a
 *                      variant with a point not ok: CompilationFailedConfig
 *                      (compile_error), InvalidConfig (skipped: the device's
 *                      limits), RuntimeFailedConfig (any other);
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
int search_kt_write(Store *db, const SearchRecord *r, const SearchObjective *o, const char *device, FILE *f,
                    KvxError *err);

#endif
