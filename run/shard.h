/* shard: a deterministic partition of a run's cases across hosts.
 *
 * Cases that share a workload group (the same point but for the baseline axes)
 * stay in one shard, so every shard generates each input once and has the
 * baseline a differential check or a ratio needs.  Groups are dealt to shards
 * largest-cost first onto the least-loaded shard (ties to the lower index), in
 * an order fixed by the group keys: the same spec and selection give the same
 * partition on every host, whatever order the hosts start in. */
#ifndef KVX_SHARD_H
#define KVX_SHARD_H

#include "run.h"

/* Shard, shard_parse, ShardPoints, shard_points and shard_points_free are
 * run.h's (kvx plan --shard lists what kvx run --shard runs). */

/* Partition n cases.  group[i] is case i's group key; cost[i] its expected cost
 * (NULL: all equal).  shard_of[i] receives the shard of case i. */
void shard_partition(const char *const *group, const double *cost, int n, int nshards, int *shard_of);

#endif
