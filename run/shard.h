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

#include "gen/plan.h"
#include "core/util.h"

typedef struct Shard {
    int k;      /* 0-based index of this shard */
    int n;      /* shard count; 1 = everything */
    const char *from;   /* "--shard", "SLURM_ARRAY_TASK_ID", or "none" */
} Shard;

/* Parse "K/N" (1 <= K <= N).  With text NULL, read Slurm's array variables
 * (SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN of SLURM_ARRAY_TASK_COUNT), else
 * the whole run.  0 or -1 with err. */
int shard_parse(const char *text, Shard *s, KvxError *err);

/* Partition n cases.  group[i] is case i's group key; cost[i] its expected cost
 * (NULL: all equal).  shard_of[i] receives the shard of case i. */
void shard_partition(const char *const *group, const double *cost, int n, int nshards, int *shard_of);

/* The selected points of a plan (sel[i] != 0) in point order, each with its
 * workload key (the sha256 of its label without the spec's baseline axes) and
 * the shard its group falls in.  kvx run and kvx plan --shard both use it, so
 * that `kvx plan --shard K/N` lists exactly what `kvx run --shard K/N` runs. */
typedef struct ShardPoints {
    int n;
    int *point;             /* point index in the plan */
    char (*key)[65];        /* workload key, hex */
    int *shard;             /* 0-based shard of nshards */
} ShardPoints;

void shard_points(const Plan *p, const unsigned char *sel, int nshards, ShardPoints *sp);
void shard_points_free(ShardPoints *sp);

#endif
