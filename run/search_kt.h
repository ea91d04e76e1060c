/* search_kt: a recorded space (search_db.h) in Kernel Tuner's cache-file
 * format, so that Kernel Tuner's strategies replay the same space in its
 * simulation mode (bench/kernel_tuner_replay.py) as `kvx replay` does. */
#ifndef KVX_SEARCH_KT_H
#define KVX_SEARCH_KT_H

#include "search_db.h"

#include <stdio.h>

/* Write r (loaded under its objective) to f as Kernel Tuner 1.5 reads a cache file
 * (kernel_tuner/util.py, process_cache and read_cache): device_name
 * (device), kernel_name (the spec's name), problem_size ([the objective
 * points per variant]), tune_params_keys (the code axes), tune_params (their
 * declared values), objective "time", and one entry per variant keyed
 * "v1,v2,..." (Python's str of each value, joined by commas) whose "time" is
 * the objective as a geometric mean over the points (ms for a time; for a
 * rate, its reciprocal, so that lower is better as Kernel Tuner minimises),
 * or "RuntimeFailedConfig" for an invalid variant.  0, or -1 when f fails. */
int search_kt_write(const SearchRecord *r, const char *device, FILE *f);

#endif
