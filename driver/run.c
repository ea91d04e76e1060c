/* run: `kvx run SPEC`, the supervisor.
 *
 * The parent never initialises CUDA.  It plans the spec for the GPU it finds (by
 * probing in a child), compiles the distinct sources on a thread pool while
 * workers measure, resolves every case into a self-contained CaseDesc (buffers,
 * launch, arguments, checks), hands cases to one worker process per GPU over
 * pipes, and stores each result in SQLite as it arrives.
 *
 * A worker that runs past the case's timeout is killed (status timeout); one
 * that dies or reports a sticky fault is replaced (status fault); a case the
 * parent cannot resolve, or whose limits the GPU cannot meet, is stored as
 * skipped with the reason.  Nothing stops the exploration but the user.
 * Cases are ordered by workload point, baseline first, so that a worker reuses
 * one generated input for every variant of a point and the differential check
 * has its baseline output. */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "case.h"
#include "inspect.h"
#include "results.h"
#include "shard.h"
#include "store.h"
#include "worker.h"

#define RUN_MAX_DEVICES 16

typedef struct RunOpts {
    CliSpecOpts spec;
    const char *db;
    const char *devices;        /* "all" or "0,2" */
    MeasureSettings m;          /* spec's, overridden by flags below */
    int set_warmup, set_min, set_max, set_noise, set_budget, set_flush, set_timeout, set_seed;
    int rerun;
    int profile;
} RunOpts;

typedef struct RunCase {
    int point;
    int src;
    char key[65];
    char workload_key[65];
    int is_baseline;
    char *label;
    char *axes_json;
    char *workload_json;
} RunCase;

typedef struct Range {
    int cur, end, group;
} Range;

typedef struct CaseGeom {
    uint32_t grid[3], block[3], cluster[3];
    uint32_t smem;
} CaseGeom;

typedef struct Worker {
    int device;                 /* GPU ordinal */
    pid_t pid;
    int to, from;               /* pipe ends: parent writes to, reads from */
    DeviceInfo info;
    int busy;                   /* index into cases, or -1 */
    int cur, end;               /* the workload group it works through: cases[cur..end) */
    int group;
    double started;             /* ms, when the case was handed over */
    double timeout_ms;
} Worker;

/* ---- compile thread: sources become ready as NVRTC finishes them ----------------- */

typedef struct Compiler {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    JitJob *jobs;               /* the sources cases need, in first-use order */
    int *ready;                 /* per job: 0 pending, 1 done */
    int *job_of;                /* per source: index into jobs, or -1 */
    int n;
    JitOptions jo;
    KvxError err;
    int failed;
    int finished;
    double wall_ms;
} Compiler;

static void compiled(void *ctx, JitJob *j)
{
    Compiler *c = ctx;
    pthread_mutex_lock(&c->mu);
    c->ready[j - c->jobs] = 1;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

static void *compile_main(void *arg)
{
    Compiler *c = arg;
    double t0 = now_ms();
    /* The pool takes jobs FIFO, so sources finish roughly in first-use order and
     * the first cases start while later sources still compile. */
    int rc = jit_compile_all(c->jobs, c->n, &c->jo, compiled, c, &c->err);
    pthread_mutex_lock(&c->mu);
    c->failed = rc != 0;
    c->finished = 1;
    c->wall_ms = now_ms() - t0;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

/* ---- workers ---------------------------------------------------------------------- */

static int worker_start(Worker *w, int device, KvxError *err)
{
    int down[2], up[2];
    /* Close-on-exec: a worker started later must not inherit this worker's pipe
     * ends, or closing ours would never give it EOF.  dup2 below clears the flag
     * on the child's own stdin and stdout. */
    if (pipe(down) || pipe(up)) {
        kvx_error_set(err, KVX_EIO, NULL, "pipe: %s", strerror(errno));
        return -1;
    }
    for (int i = 0; i < 2; i++) {
        fcntl(down[i], F_SETFD, FD_CLOEXEC);
        fcntl(up[i], F_SETFD, FD_CLOEXEC);
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        kvx_error_set(err, KVX_EIO, NULL, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        /* A worker must not outlive a killed parent: EOF on its stdin reaches
         * only an idle one, and one stuck in a kernel would hold its GPU. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(1);
        /* Exec a fresh image: the parent has threads (NVRTC), and a CUDA context
         * must not be created in a forked copy of a threaded process. */
        dup2(down[0], STDIN_FILENO);
        dup2(up[1], STDOUT_FILENO);
        close(down[0]); close(down[1]); close(up[0]); close(up[1]);
        char dev[16];
        snprintf(dev, sizeof dev, "%d", device);
        execl("/proc/self/exe", "kvx", "__worker", dev, (char *)NULL);
        _exit(127);
    }
    close(down[0]);
    close(up[1]);
    w->device = device;
    w->pid = pid;
    w->to = down[1];
    w->from = up[0];
    w->busy = -1;
    if (worker_start_read(w->from, &w->info, err) != 0) {
        int status = 0;
        close(w->to);
        waitpid(pid, &status, 0);
        close(w->from);
        w->pid = 0;
        return -1;
    }
    return 0;
}

static void worker_stop(Worker *w, int kill_it)
{
    if (!w->pid)
        return;
    close(w->to);
    if (kill_it)
        kill(w->pid, SIGKILL);
    int status;
    waitpid(w->pid, &status, 0);
    close(w->from);
    w->pid = 0;
}

/* ---- options ------------------------------------------------------------------------ */

static void usage(void)
{
    MeasureSettings d;
    spec_measure_defaults(&d);
    fprintf(stderr,
            "usage: kvx run SPEC [options]\n"
            "  --db PATH          results database (default %s)\n"
            "  --devices LIST     all, or GPU ordinals 0,2,... (default all)\n"
            "  --where EXPR       run only the points where EXPR holds\n"
            "  --shard K/N        run shard K of N (default: from SLURM_ARRAY_TASK_ID/COUNT)\n"
            "  --rerun            measure cases again even when stored\n"
            "  --cache DIR        compile cache (default ~/.cache/kvx); --no-cache: recompile\n"
            "  -j N               compile threads (default: cores)\n"
            "  --profile          print where the time went\n"
            "measurement (defaults; a spec's measure: overrides them, these flags override both):\n"
            "  --warmup N         untimed launches after the verified one (%d)\n"
            "  --min-samples N    (%d)\n"
            "  --max-samples N    (%d)\n"
            "  --noise X          stop when (p75-p25)/median <= X (%g)\n"
            "  --budget-ms X      sampling time per case (%g)\n"
            "  --flush-l2 / --no-flush-l2  overwrite 2x L2 before each sample (%s)\n"
            "  --timeout S        per case, then the worker is killed (%g)\n"
            "  --seed N           input generation (%llu)\n",
            RESULTS_DEFAULT_DB, d.warmup, d.min_samples, d.max_samples, d.noise, d.budget_ms,
            d.flush_l2 ? "on" : "off", d.timeout_s, (unsigned long long)d.seed);
}

static int parse_opts(int argc, char **argv, RunOpts *o)
{
    static const struct option opts[] = {
        {"db", required_argument, 0, 'd'},       {"devices", required_argument, 0, 'D'},
        {"where", required_argument, 0, 'w'},    {"shard", required_argument, 0, 'S'},
        {"rerun", no_argument, 0, 'R'},          {"cache", required_argument, 0, 'c'},
        {"no-cache", no_argument, 0, 'N'},       {"profile", no_argument, 0, 'p'},
        {"warmup", required_argument, 0, 1},     {"min-samples", required_argument, 0, 2},
        {"max-samples", required_argument, 0, 3},{"noise", required_argument, 0, 4},
        {"budget-ms", required_argument, 0, 5},  {"flush-l2", no_argument, 0, 6},
        {"no-flush-l2", no_argument, 0, 7},      {"timeout", required_argument, 0, 8},
        {"seed", required_argument, 0, 9},       {"arch", required_argument, 0, 'a'},
        {"help", no_argument, 0, 'h'},           {0, 0, 0, 0}};
    memset(o, 0, sizeof *o);
    optind = 1;
    opterr = 0;
    int c;
    char *end;
    while ((c = getopt_long(argc, argv, ":j:h", opts, NULL)) != -1) {
        double v = 0;
        if (c >= 1 && c <= 9 && c != 6 && c != 7) {
            errno = 0;
            v = strtod(optarg, &end);
            if (errno || *end || v < 0) {
                fprintf(stderr, "kvx run: %s is '%s' (expected a number >= 0)\n", argv[optind - 1], optarg);
                return 2;
            }
        }
        switch (c) {
        case 'd': o->db = optarg; break;
        case 'D': o->devices = optarg; break;
        case 'w': o->spec.where = optarg; break;
        case 'S': o->spec.shard = optarg; break;
        case 'R': o->rerun = 1; break;
        case 'c': o->spec.cache_dir = optarg; break;
        case 'N': o->spec.no_cache = 1; break;
        case 'p': o->profile = 1; break;
        case 'j': o->spec.jobs = atoi(optarg); break;
        case 'a': o->spec.archs = optarg; break;
        case 1: o->m.warmup = (int)v; o->set_warmup = 1; break;
        case 2: o->m.min_samples = (int)v; o->set_min = 1; break;
        case 3: o->m.max_samples = (int)v; o->set_max = 1; break;
        case 4: o->m.noise = v; o->set_noise = 1; break;
        case 5: o->m.budget_ms = v; o->set_budget = 1; break;
        case 6: o->m.flush_l2 = 1; o->set_flush = 1; break;
        case 7: o->m.flush_l2 = 0; o->set_flush = 1; break;
        case 8: o->m.timeout_s = v; o->set_timeout = 1; break;
        case 9: o->m.seed = (uint64_t)v; o->set_seed = 1; break;
        case 'h': usage(); exit(0);
        case ':':
            fprintf(stderr, "kvx run: option '%s' needs a value\n", argv[optind - 1]);
            return 2;
        default:
            fprintf(stderr, "kvx run: unknown option '%s'\n", argv[optind - 1]);
            usage();
            return 2;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "kvx run: expected one SPEC file\n");
        usage();
        return 2;
    }
    o->spec.spec_path = argv[optind];
    return 0;
}

static void apply_overrides(const RunOpts *o, MeasureSettings *m)
{
    if (o->set_warmup) m->warmup = o->m.warmup;
    if (o->set_min) m->min_samples = o->m.min_samples;
    if (o->set_max) m->max_samples = o->m.max_samples;
    if (o->set_noise) m->noise = o->m.noise;
    if (o->set_budget) m->budget_ms = o->m.budget_ms;
    if (o->set_flush) m->flush_l2 = o->m.flush_l2;
    if (o->set_timeout) m->timeout_s = o->m.timeout_s;
    if (o->set_seed) m->seed = o->m.seed;
    if (m->max_samples < m->min_samples)
        m->max_samples = m->min_samples;
}

static char *measure_json(const MeasureSettings *m)
{
    StrBuf b;
    sb_init(&b);
    sb_printf(&b, "{\"warmup\":%d,\"min_samples\":%d,\"max_samples\":%d,\"noise\":%g,\"budget_ms\":%g,"
              "\"flush_l2\":%s,\"timeout_s\":%g,\"seed\":%llu,\"stat\":\"median\",\"timer\":\"cuEvent\"}",
              m->warmup, m->min_samples, m->max_samples, m->noise, m->budget_ms,
              m->flush_l2 ? "true" : "false", m->timeout_s, (unsigned long long)m->seed);
    return sb_take(&b);
}

/* ---- JSON of axis values -------------------------------------------------------------- */

static void json_string(StrBuf *b, const char *s)
{
    sb_putc(b, '"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            sb_printf(b, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            sb_printf(b, "\\u%04x", *s);
        else
            sb_putc(b, *s);
    }
    sb_putc(b, '"');
}

static char *axes_json(const Plan *p, int point, uint64_t mask)
{
    const Spec *s = p->spec;
    const int *v = plan_point(p, point);
    StrBuf b;
    sb_init(&b);
    sb_putc(&b, '{');
    int first = 1;
    for (int a = 0; a < s->naxes; a++) {
        if (!(mask & (1ULL << a)))
            continue;
        if (!first)
            sb_putc(&b, ',');
        first = 0;
        json_string(&b, s->axes[a].name);
        sb_putc(&b, ':');
        const AxisValue *av = &s->axes[a].vals[v[a]];
        if (av->v.kind == VAL_STR)
            json_string(&b, av->text);
        else
            sb_puts(&b, av->text);
    }
    sb_putc(&b, '}');
    return sb_take(&b);
}

/* ---- resolving a case ------------------------------------------------------------------- */

static uint64_t name_seed(uint64_t seed, const char *name)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a: the buffer name picks the stream */
    for (; *name; name++)
        h = (h ^ (unsigned char)*name) * 1099511628211ULL;
    return seed ^ h;
}

typedef struct BufCtx {
    const Spec *s;
} BufCtx;

static const ElemType *buffer_type(PointEnv *pe, const BufferSpec *b)
{
    if (b->type[0] != '$')
        return elem_type_find(b->type);
    const SetEntry *se = point_set_var(pe, b->type + 1);
    if (se)
        return se->v.kind == VAL_STR ? elem_type_find(se->v.s) : NULL;
    int a = spec_axis_find(pe->spec, b->type + 1);
    if (a >= 0) {
        Value v = pe->spec->axes[a].vals[pe->vals[a]].v;
        return v.kind == VAL_STR ? elem_type_find(v.s) : NULL;
    }
    return NULL;
}

static int eval_double(PointEnv *pe, const Expr *e, double dflt, double *out, KvxError *err)
{
    if (!e) {
        *out = dflt;
        return 0;
    }
    Value v;
    if (point_eval(pe, e, &v, err))
        return -1;
    if (!val_is_num(v)) {
        kvx_error_set(err, KVX_EINPUT, &e->pos, "expected a number, got '%s'", val_text(pe->arena, v));
        return -1;
    }
    *out = val_num(v);
    return 0;
}

static int eval_dim(PointEnv *pe, const Expr *e, uint32_t *out, const char *what, KvxError *err)
{
    int64_t v = 1;
    if (e && point_eval_int(pe, e, &v, err))
        return -1;
    if (v < 1 || v > 0x7fffffff) {
        kvx_error_set(err, KVX_EINPUT, e ? &e->pos : NULL, "%s is %lld (expected 1 .. 2^31-1)", what,
                      (long long)v);
        return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

static void put_scalar(CaseArg *a, const PtxParam *pp, Value v)
{
    a->buf = -1;
    a->size = pp->size;
    a->align = pp->align ? pp->align : pp->size;
    memset(a->bytes, 0, sizeof a->bytes);
    if (pp->is_float && pp->size == 4) {
        float f = (float)val_num(v);
        memcpy(a->bytes, &f, 4);
    } else if (pp->is_float) {
        double d = val_num(v);
        memcpy(a->bytes, &d, 8);
    } else {
        int64_t i = v.kind == VAL_FLOAT ? (int64_t)llround(v.d) : v.i;
        memcpy(a->bytes, &i, (size_t)pp->size); /* little-endian: the low bytes */
    }
}

/* Fill c for point i.  Returns 0, or -1 with err naming what could not be
 * resolved (the case is then stored as skipped). */
static int resolve_case(const Plan *p, int point, const JitJob *job, const RunCase *rc,
                        const MeasureSettings *m, int have_baseline, CaseDesc *c, double metrics[3],
                        KvxError *err)
{
    const Spec *s = p->spec;
    Arena *a = arena_new();
    PointEnv pe;
    point_env_init(&pe, s, plan_point(p, point), &p->facts, a);
    memset(c, 0, sizeof *c);
    int ok = -1;
    snprintf(c->cubin_path, sizeof c->cubin_path, "%s/kernel.cubin", job->dir);
    snprintf(c->kernel, sizeof c->kernel, "%s", s->kernel);
    c->measure = *m;
    memcpy(c->workload_key, rc->workload_key, 65);
    c->is_baseline = rc->is_baseline;

    if (s->nbufs > CASE_MAX_BUFS) {
        kvx_error_set(err, KVX_EINPUT, &s->bufs[CASE_MAX_BUFS].pos, "more than %d buffers", CASE_MAX_BUFS);
        goto done;
    }
    c->nbufs = s->nbufs;
    for (int b = 0; b < s->nbufs; b++) {
        const BufferSpec *bs = &s->bufs[b];
        CaseBuf *cb = &c->bufs[b];
        snprintf(cb->name, sizeof cb->name, "%s", bs->name);
        const ElemType *t = buffer_type(&pe, bs);
        if (!t) {
            kvx_error_set(err, KVX_EINPUT, &bs->pos, "buffer '%s' has no element type at this point",
                          bs->name);
            goto done;
        }
        cb->type = t->id;
        int64_t count, offset = 0;
        if (point_eval_int(&pe, bs->count, &count, err) || (bs->offset && point_eval_int(&pe, bs->offset,
                                                                                        &offset, err)))
            goto done;
        if (count < 1 || offset < 0) {
            kvx_error_set(err, KVX_EINPUT, &bs->pos, "buffer '%s' has count %lld and offset %lld "
                          "(expected count >= 1, offset >= 0)", bs->name, (long long)count, (long long)offset);
            goto done;
        }
        cb->count = (uint64_t)count;
        cb->offset = (uint64_t)offset;
        const InitSpec *in = spec_init_at(&bs->init, pe.vals);
        InitParams *ip = &cb->init;
        ip->kind = in->kind;
        double len = 1;
        if (eval_double(&pe, in->value, 0, &ip->value, err) || eval_double(&pe, in->lo, 0, &ip->lo, err) ||
            eval_double(&pe, in->hi, 0, &ip->hi, err) ||
            eval_double(&pe, in->exponent, 1, &ip->exponent, err) ||
            eval_double(&pe, in->fraction, 0, &ip->fraction, err) || eval_double(&pe, in->length, 1, &len, err))
            goto done;
        ip->length = (int64_t)len;
        /* Integers exactly as written (a double rounds above 2^53). */
        const Expr *ix[3] = {in->value, in->lo, in->hi};
        int64_t *iv[3] = {&ip->ivalue, &ip->ilo, &ip->ihi};
        for (int q = 0; q < 3; q++) {
            Value xv;
            if (ix[q] && point_eval(&pe, ix[q], &xv, err) == 0 && xv.kind == VAL_INT) {
                *iv[q] = xv.i;
                ip->exact |= 1u << q;
            }
        }
        ip->seed = name_seed(m->seed, bs->name);
        inputs_key(t, cb->count, ip, cb->input_key);
        cb->checked = bs->checked;
    }

    const LaunchSpec *l = &s->launch;
    for (int d = 0; d < 3; d++) {
        static const char *gn[] = {"grid.x", "grid.y", "grid.z"}, *bn[] = {"block.x", "block.y", "block.z"},
                          *cn[] = {"cluster.x", "cluster.y", "cluster.z"};
        if (eval_dim(&pe, l->grid[d], &c->grid[d], gn[d], err) ||
            eval_dim(&pe, l->block[d], &c->block[d], bn[d], err) ||
            eval_dim(&pe, l->cluster[d], &c->cluster[d], cn[d], err))
            goto done;
    }
    int64_t smem = 0;
    if (l->smem && point_eval_int(&pe, l->smem, &smem, err))
        goto done;
    if (smem < 0 || smem > 0x7fffffff) {
        kvx_error_set(err, KVX_EINPUT, &l->smem->pos, "smem is %lld bytes", (long long)smem);
        goto done;
    }
    c->smem = (uint32_t)smem;

    PtxParam params[CASE_MAX_ARGS];
    int np = jit_ptx_params(job->ptx, s->kernel, params, CASE_MAX_ARGS);
    if (np < 0) {
        kvx_error_set(err, KVX_EINPUT, &l->pos, "the PTX has no entry point '%s' (is it extern \"C\"?)",
                      s->kernel);
        goto done;
    }
    if (np != l->nargs) {
        kvx_error_set(err, KVX_EINPUT, &l->pos, "kernel '%s' takes %d parameters but launch.args gives %d",
                      s->kernel, np, l->nargs);
        goto done;
    }
    c->nargs = l->nargs;
    for (int i = 0; i < l->nargs; i++) {
        const Expr *e = l->args[i];
        CaseArg *ca = &c->args[i];
        if (e->kind == EX_IDENT && spec_buffer_find(s, e->name) >= 0) {
            if (params[i].size != 8) {
                kvx_error_set(err, KVX_EINPUT, &e->pos, "argument %d is buffer '%s' but the kernel's "
                              "parameter %d is %d bytes (expected a pointer)", i + 1, e->name, i + 1,
                              params[i].size);
                goto done;
            }
            ca->buf = spec_buffer_find(s, e->name);
            ca->size = 8;
            ca->align = 8;
            continue;
        }
        Value v;
        if (point_eval(&pe, e, &v, err))
            goto done;
        if (!val_is_num(v) && v.kind != VAL_BOOL) {
            kvx_error_set(err, KVX_EINPUT, &e->pos, "argument %d is '%s' (expected a number or a buffer)",
                          i + 1, val_text(a, v));
            goto done;
        }
        if (params[i].size > 8) {
            kvx_error_set(err, KVX_EINPUT, &e->pos, "kernel parameter %d is a %d-byte aggregate (kvx "
                          "passes scalars and pointers)", i + 1, params[i].size);
            goto done;
        }
        put_scalar(ca, &params[i], v);
    }

    for (int k = 0; k < s->nchecks; k++) {
        const CheckSpec *cs = &s->checks[k];
        CaseCheck *cc = &c->checks[c->nchecks++];
        const ElemType *t = &elem_types[c->bufs[cs->buffer].type];
        cc->buf = cs->buffer;
        cc->rtol = cs->rtol >= 0 ? cs->rtol : s->tolerance[t->id] >= 0 ? s->tolerance[t->id] : t->rtol;
        const Expr *r = cs->ref;
        if (r->kind == EX_CALL && expr_is_reference(r->name)) {
            snprintf(cc->ref, sizeof cc->ref, "%s", r->name);
            if (r->nargs > CASE_MAX_REFARGS) {
                kvx_error_set(err, KVX_EINPUT, &r->pos, "too many reference arguments");
                goto done;
            }
            cc->nargs = r->nargs;
            for (int j = 0; j < r->nargs; j++) {
                const Expr *x = r->args[j];
                cc->argbuf[j] = -1;
                if (x->kind == EX_IDENT && spec_buffer_find(s, x->name) >= 0) {
                    int bi = spec_buffer_find(s, x->name);
                    cc->argbuf[j] = bi;
                    cc->args[j].is_buf = 1;
                    cc->args[j].t = &elem_types[c->bufs[bi].type];
                    cc->args[j].count = c->bufs[bi].count;
                    continue;
                }
                Value v;
                if (point_eval(&pe, x, &v, err))
                    goto done;
                if (v.kind == VAL_STR) {
                    snprintf(cc->strs[j], sizeof cc->strs[j], "%s", v.s);
                    v.s = cc->strs[j];
                }
                cc->args[j].v = v;
            }
        } else {
            Value v;
            if (point_eval(&pe, r, &v, err))
                goto done;
            cc->constant = v;
        }
    }
    if (s->differential && have_baseline && !rc->is_baseline) {
        for (int b = 0; b < s->nbufs && c->nchecks < CASE_MAX_BUFS; b++) {
            if (!s->bufs[b].checked)
                continue;
            CaseCheck *cc = &c->checks[c->nchecks++];
            const ElemType *t = &elem_types[c->bufs[b].type];
            cc->buf = b;
            snprintf(cc->ref, sizeof cc->ref, "baseline");
            cc->rtol = s->tolerance[t->id] >= 0 ? s->tolerance[t->id] : t->rtol;
        }
    }

    const Expr *mx[3] = {s->metrics.bytes, s->metrics.atomics, s->metrics.elements};
    for (int k = 0; k < 3; k++)
        if (eval_double(&pe, mx[k], NAN, &metrics[k], err))
            goto done;
    ok = 0;
done:
    arena_free(a);
    return ok;
}

/* ---- the run ------------------------------------------------------------------------------ */

static int parse_devices(const char *list, int ngpu, int *out, KvxError *err)
{
    int n = 0;
    if (!list || !strcmp(list, "all")) {
        for (int i = 0; i < ngpu && i < RUN_MAX_DEVICES; i++)
            out[n++] = i;
        return n;
    }
    char *copy = xstrdup(list), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *end;
        long d = strtol(t, &end, 10);
        if (*end || d < 0 || d >= ngpu || n == RUN_MAX_DEVICES) {
            kvx_error_set(err, KVX_EINPUT, NULL, "--devices has '%s' (expected all or ordinals below %d)",
                          t, ngpu);
            free(copy);
            return -1;
        }
        for (int k = 0; k < n; k++)
            if (out[k] == d) {
                kvx_error_set(err, KVX_EINPUT, NULL, "--devices names GPU %ld twice", d);
                free(copy);
                return -1;
            }
        out[n++] = (int)d;
    }
    free(copy);
    return n;
}

static int cmp_case(const void *x, const void *y)
{
    const RunCase *a = x, *b = y;
    int c = strcmp(a->workload_key, b->workload_key);
    if (c)
        return c;
    if (a->is_baseline != b->is_baseline)
        return b->is_baseline - a->is_baseline;
    return a->point - b->point;
}

static const char *status_name(int st) { return case_status_names[st]; }

typedef struct Tally {
    int counts[CASE_STATUS_COUNT];
    int done, total, skipped_stored;
    double t_input, t_verify, t_measure;
} Tally;

static void progress(const Tally *t, double t0, int tty)
{
    if (!tty)
        return;
    double el = (now_ms() - t0) / 1000;
    double rate = el > 0 ? t->done / el : 0;
    double eta = rate > 0 ? (t->total - t->done) / rate : 0;
    int fails = t->done - t->counts[CASE_ok];
    fprintf(stderr, "\r  %d/%d cases  %.1f/s  ETA %.0fs  %d not ok   ", t->done, t->total, rate, eta, fails);
}

/* Several archs among the selected GPUs: one `kvx run` per arch, as child
 * processes (fork + exec, the same arguments with --devices narrowed to that
 * arch's GPUs), run side by side into the same database.  Each plans the spec
 * with its own GPU's facts and compiles for its own arch.  Returns the worst
 * exit status. */
static int run_per_arch(int argc, char **argv, const DeviceInfo *infos, const int *devs, int ndev)
{
    int done[RUN_MAX_DEVICES] = {0};
    pid_t pids[RUN_MAX_DEVICES];
    int nchild = 0, worst = 0;
    for (int i = 0; i < ndev; i++) {
        if (done[i])
            continue;
        char list[256] = "";
        for (int k = i; k < ndev; k++)
            if (infos[devs[k]].cc_major == infos[devs[i]].cc_major &&
                infos[devs[k]].cc_minor == infos[devs[i]].cc_minor) {
                done[k] = 1;
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%d", list[0] ? "," : "",
                         devs[k]);
            }
        printf("kvx run: sm_%d%d on GPUs %s\n", infos[devs[i]].cc_major, infos[devs[i]].cc_minor, list);
        fflush(stdout);
        char **args = xcalloc((size_t)argc + 4, sizeof(char *));
        int n = 0;
        args[n++] = "kvx";
        for (int a = 0; a < argc; a++) {
            if (!strcmp(argv[a], "--devices")) {
                a++;
                continue;
            }
            if (!strncmp(argv[a], "--devices=", 10))
                continue;
            args[n++] = argv[a];
        }
        args[n++] = "--devices";
        args[n++] = list;
        args[n] = NULL;
        pid_t pid = fork();
        if (pid == 0) {
            execv("/proc/self/exe", args);
            _exit(127);
        }
        free(args);
        if (pid > 0)
            pids[nchild++] = pid;
        else
            worst = 3;
    }
    for (int c = 0; c < nchild; c++) {
        int status = 0;
        waitpid(pids[c], &status, 0);
        int code = WIFEXITED(status) ? WEXITSTATUS(status) : 3;
        if (code > worst)
            worst = code;
    }
    return worst;
}

/* Cases that compare with each other: with a baseline, those that differ only
 * in the baseline axes (one workload key); without one, those at one workload
 * point (the axes other than the code axes). */
static int same_group(const RunCase *a, const RunCase *b, uint64_t base_mask)
{
    return base_mask ? !strcmp(a->workload_key, b->workload_key)
                     : !strcmp(a->workload_json, b->workload_json);
}

/* Order of two points by their values of the axes outside skip_mask, in
 * declaration order. */
static int point_cmp(const Plan *p, int a, int b, uint64_t skip_mask)
{
    const int *va = plan_point(p, a), *vb = plan_point(p, b);
    for (int ax = 0; ax < p->spec->naxes; ax++)
        if (!(skip_mask >> ax & 1) && va[ax] != vb[ax])
            return va[ax] < vb[ax] ? -1 : 1;
    return 0;
}

/* The best variant of each group of comparable cases and its speed-up over its
 * baseline partner: one line per group when there are few, else how often each
 * choice of the baseline axes won, with the range of its speed-ups. */
static void print_best(const Plan *p, const RunCase *cases, const double *medians, int n,
                       uint64_t base_mask)
{
    enum { LIST_MAX = 16 };
    const uint64_t choice_mask = base_mask ? base_mask : p->code_axes;
    int *best = xmalloc(sizeof(int) * (size_t)(n ? n : 1));
    double *speedup = xmalloc(sizeof(double) * (size_t)(n ? n : 1));
    char *seen = xcalloc((size_t)(n ? n : 1), 1);
    int ngroups = 0;
    for (int i = 0; i < n; i++) {
        if (seen[i])
            continue;
        int b = -1;
        for (int k = i; k < n; k++) {
            if (!same_group(&cases[k], &cases[i], base_mask))
                continue;
            seen[k] = 1;
            if (!isnan(medians[k]) && (b < 0 || medians[k] < medians[b]))
                b = k;
        }
        if (b < 0)
            continue;
        double base = NAN;
        for (int k = 0; k < n; k++)
            if (cases[k].is_baseline && !strcmp(cases[k].workload_key, cases[b].workload_key))
                base = medians[k];
        best[ngroups] = b;
        speedup[ngroups++] = base / medians[b];
    }
    /* Groups in the order of their axes (declaration order), choices left out;
     * insertion sort: a run has at most a few thousand groups. */
    for (int g = 1; g < ngroups; g++) {
        int bg = best[g];
        double sg = speedup[g];
        int h = g;
        for (; h > 0 && point_cmp(p, cases[best[h - 1]].point, cases[bg].point, choice_mask) > 0; h--) {
            best[h] = best[h - 1];
            speedup[h] = speedup[h - 1];
        }
        best[h] = bg;
        speedup[h] = sg;
    }
    if (ngroups && ngroups <= LIST_MAX) {
        printf("\nbest variant per point (speed-up over the baseline at the same point):\n");
        for (int g = 0; g < ngroups; g++) {
            char *where = plan_point_label(p, cases[best[g]].point, ~choice_mask);
            char *what = plan_point_label(p, cases[best[g]].point, choice_mask);
            printf("  %-44s %-44s %10.4f ms", where, what, medians[best[g]]);
            if (!isnan(speedup[g]))
                printf("  %6.2fx", speedup[g]);
            printf("\n");
            free(where);
            free(what);
        }
    } else if (ngroups) {
        /* Too many points to list: each winner once, most wins first. */
        typedef struct Winner {
            char *what;
            int wins;
            double lo, hi;
        } Winner;
        Winner *w = xcalloc((size_t)ngroups, sizeof *w);
        int nw = 0;
        for (int g = 0; g < ngroups; g++) {
            char *what = plan_point_label(p, cases[best[g]].point, choice_mask);
            int k = 0;
            while (k < nw && strcmp(w[k].what, what))
                k++;
            if (k == nw)
                w[nw++] = (Winner){what, 0, INFINITY, -INFINITY};
            else
                free(what);
            w[k].wins++;
            if (!isnan(speedup[g])) {
                w[k].lo = fmin(w[k].lo, speedup[g]);
                w[k].hi = fmax(w[k].hi, speedup[g]);
            }
        }
        for (int k = 1; k < nw; k++)
            for (int j = k; j > 0 && w[j - 1].wins < w[j].wins; j--) {
                Winner t = w[j];
                w[j] = w[j - 1];
                w[j - 1] = t;
            }
        printf("\nbest variant at each of %d points, by how often it won (speed-up over the baseline):\n",
               ngroups);
        for (int k = 0; k < nw; k++) {
            printf("  %-44s best at %4d of %d points", w[k].what, w[k].wins, ngroups);
            if (w[k].lo <= w[k].hi)
                printf("   %.2fx .. %.2fx", w[k].lo, w[k].hi);
            printf("\n");
            free(w[k].what);
        }
        free(w);
    }
    free(seen);
    free(best);
    free(speedup);
}

int cmd_run(int argc, char **argv)
{
    RunOpts o;
    int rc = parse_opts(argc, argv, &o);
    if (rc)
        return rc;
    KvxError err = {0};
    Spec *s = spec_load(o.spec.spec_path, &err);
    if (!s) {
        kvx_error_print(&err, stderr);
        kvx_error_clear(&err);
        return 2;
    }

    /* The GPU, probed in a child: the parent stays free of CUDA. */
    DeviceInfo infos[RUN_MAX_DEVICES];
    int ngpu = 0;
    if (worker_probe(infos, RUN_MAX_DEVICES, &ngpu, &err) != 0 || ngpu == 0) {
        fprintf(stderr, "kvx run: %s (plan, gen, compile and inspect work without one)\n",
                err.code ? err.msg : "no GPU found: measuring needs a GPU");
        kvx_error_clear(&err);
        spec_free(s);
        return 1;
    }
    int devs[RUN_MAX_DEVICES] = {0};
    int ndev = parse_devices(o.devices, ngpu, devs, &err);
    if (ndev <= 0) {
        if (ndev == 0)
            kvx_error_set(&err, KVX_EINPUT, NULL, "--devices selects no GPU");
        kvx_error_print(&err, stderr);
        kvx_error_clear(&err);
        spec_free(s);
        return 2;
    }
    /* One plan per arch.  A host whose selected GPUs span several archs runs one
     * supervisor per arch, side by side, each with cubins for its own arch. */
    int narchs = 0;
    for (int i = 0; i < ndev; i++) {
        int first = 1;
        for (int k = 0; k < i && first; k++)
            first = !(infos[devs[k]].cc_major == infos[devs[i]].cc_major &&
                      infos[devs[k]].cc_minor == infos[devs[i]].cc_minor);
        narchs += first;
    }
    if (narchs > 1) {
        rc = run_per_arch(argc, argv, infos, devs, ndev);
        spec_free(s);
        return rc;
    }
    DeviceFacts facts;
    device_info_facts(&infos[devs[0]], &facts);

    Plan p;
    if (plan_build(s, &facts, &p, &err) != 0) {
        kvx_error_print(&err, stderr);
        kvx_error_clear(&err);
        spec_free(s);
        return 2;
    }
    unsigned char *sel = cli_select_points(&p, o.spec.where, &err);
    if (!sel) {
        kvx_error_print(&err, stderr);
        kvx_error_clear(&err);
        plan_free(&p);
        spec_free(s);
        return 2;
    }
    Shard shard;
    if (shard_parse(o.spec.shard, &shard, &err) != 0) {
        kvx_error_print(&err, stderr);
        kvx_error_clear(&err);
        free(sel);
        plan_free(&p);
        spec_free(s);
        return 2;
    }
    MeasureSettings m = s->measure;
    apply_overrides(&o, &m);
    char *mjson = measure_json(&m);
    const char *db_path = o.db ? o.db : RESULTS_DEFAULT_DB;
    if (!o.db) {
        char *dir = path_dir(db_path);
        mkdir_p(dir);
        free(dir);
    }
    Store *st = store_open(db_path, &err);
    if (!st) {
        kvx_error_print(&err, stderr);
        kvx_error_clear(&err);
        free(mjson);
        free(sel);
        plan_free(&p);
        spec_free(s);
        return 3;
    }

    /* Baseline axes: a point's partner is itself with these set to the baseline. */
    uint64_t base_mask = 0;
    for (int i = 0; i < s->nbaseline; i++)
        base_mask |= 1ULL << s->baseline[i].axis;
    char opts_text[1024] = "";
    for (int i = 0; i < s->noptions; i++)
        snprintf(opts_text + strlen(opts_text), sizeof opts_text - strlen(opts_text), "%s%s", i ? " " : "",
                 s->options[i]);
    const char *uuid = infos[devs[0]].uuid;

    /* Cases: selected points of this shard, minus those already stored.  The
     * workload key groups a point with its baseline partner (the point with the
     * baseline axes set to the baseline's values). */
    RunCase *cases = xcalloc((size_t)(p.npoints ? p.npoints : 1), sizeof(RunCase));
    int ncases = 0, nstored = 0, nsel = 0;
    char (*wkeys)[65] = xmalloc(65 * (size_t)(p.npoints ? p.npoints : 1));
    const char **groups = xmalloc(sizeof(char *) * (size_t)(p.npoints ? p.npoints : 1));
    int *sel_idx = xmalloc(sizeof(int) * (size_t)(p.npoints ? p.npoints : 1));
    int *shard_of = xmalloc(sizeof(int) * (size_t)(p.npoints ? p.npoints : 1));
    for (int i = 0; i < p.npoints; i++) {
        if (!sel[i])
            continue;
        char *wl = plan_point_label(&p, i, ~base_mask);
        sha256_hex(wl, strlen(wl), wkeys[nsel]);
        free(wl);
        groups[nsel] = wkeys[nsel];
        sel_idx[nsel++] = i;
    }
    shard_partition(groups, NULL, nsel, shard.n, shard_of);
    for (int q = 0; q < nsel && rc == 0; q++) {
        if (shard_of[q] != shard.k)
            continue;
        int i = sel_idx[q];
        RunCase *c = &cases[ncases];
        c->point = i;
        c->src = p.point_src[i];
        c->label = plan_point_label(&p, i, ~0ULL);
        c->axes_json = axes_json(&p, i, ~0ULL);
        c->workload_json = axes_json(&p, i, ~p.code_axes);
        memcpy(c->workload_key, wkeys[q], 65);
        const char *parts[] = {s->name, p.srcs[c->src].hash, opts_text, facts.arch, c->label, uuid, mjson, NULL};
        store_case_key(parts, c->key);
        const int *v = plan_point(&p, i);
        c->is_baseline = s->nbaseline > 0;
        for (int b = 0; b < s->nbaseline; b++)
            c->is_baseline &= v[s->baseline[b].axis] == s->baseline[b].value;
        int stored = store_has_case(st, c->key, &err);
        if (stored < 0) {
            kvx_error_print(&err, stderr);
            kvx_error_clear(&err);
            rc = 3;
        } else if (stored && !o.rerun) {
            nstored++;
            free(c->label);
            free(c->axes_json);
            free(c->workload_json);
            continue;
        } else if (stored && store_forget_case(st, c->key, &err) != 0) {
            kvx_error_print(&err, stderr);
            kvx_error_clear(&err);
            rc = 3;
        }
        ncases++;
    }
    free(wkeys);
    free(groups);
    free(sel_idx);
    free(shard_of);
    qsort(cases, (size_t)ncases, sizeof(RunCase), cmp_case);

    printf("kvx run %s: %d points selected", s->path, nsel);
    if (shard.n > 1)
        printf(", shard %d/%d (from %s) has %d", shard.k + 1, shard.n, shard.from, ncases + nstored);
    printf(": %d to run, %d already stored (--rerun to repeat)\n", ncases, nstored);
    printf("device  %s, %s, %d SMs, L2 %.0f MiB, peak %.0f GB/s; %d worker%s\n", infos[devs[0]].name,
           facts.arch, facts.sm_count, facts.l2_bytes / 1048576.0, facts.peak_gbs, ndev, ndev > 1 ? "s" : "");
    printf("measure %s\n", mjson);
    fflush(stdout);

    /* Compile the sources the cases need, in first-use order, while running. */
    Compiler comp = {0};
    pthread_mutex_init(&comp.mu, NULL);
    pthread_cond_init(&comp.cv, NULL);
    comp.jobs = xcalloc((size_t)(p.nsrcs ? p.nsrcs : 1), sizeof(JitJob));
    comp.ready = xcalloc((size_t)(p.nsrcs ? p.nsrcs : 1), sizeof(int));
    comp.job_of = xmalloc(sizeof(int) * (size_t)(p.nsrcs ? p.nsrcs : 1));
    for (int k = 0; k < p.nsrcs; k++)
        comp.job_of[k] = -1;
    char *cache = o.spec.cache_dir ? xstrdup(o.spec.cache_dir) : cli_default_cache_dir();
    comp.jo = (JitOptions){.cache_dir = cache, .threads = o.spec.jobs, .use_cache = !o.spec.no_cache,
                           .cccl_include = NULL};
    for (int i = 0; i < ncases; i++) {
        int k = cases[i].src;
        if (comp.job_of[k] >= 0)
            continue;
        comp.job_of[k] = comp.n;
        JitJob *j = &comp.jobs[comp.n++];
        j->name = p.srcs[k].file;
        j->source = p.srcs[k].text;
        j->arch = facts.arch;
        j->options = s->options;
        j->noptions = s->noptions;
        j->use_cccl = s->use_cccl;
    }
    double t0 = now_ms();
    pthread_create(&comp.thread, NULL, compile_main, &comp);

    RunEnv env = {0};
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    char started[32];
    time_t now = time(NULL);
    strftime(started, sizeof started, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    StrBuf cmd;
    sb_init(&cmd);
    for (int i = 0; i < argc; i++)
        sb_printf(&cmd, "%s%s", i ? " " : "kvx ", argv[i]);
    int nv_major = 0, nv_minor = 0;
    jit_nvrtc_version(&nv_major, &nv_minor);
    char nvrtc[16];
    snprintf(nvrtc, sizeof nvrtc, "%d.%d", nv_major, nv_minor);
    StrBuf basej;
    sb_init(&basej);
    sb_putc(&basej, '{');
    for (int b = 0; b < s->nbaseline; b++) {
        if (b)
            sb_putc(&basej, ',');
        const Axis *ax = &s->axes[s->baseline[b].axis];
        json_string(&basej, ax->name);
        sb_putc(&basej, ':');
        const AxisValue *av = &ax->vals[s->baseline[b].value];
        if (av->v.kind == VAL_STR)
            json_string(&basej, av->text);
        else
            sb_puts(&basej, av->text);
    }
    sb_putc(&basej, '}');
    StrBuf declared;
    sb_init(&declared);
    sb_putc(&declared, '{');
    for (int a = 0; a < s->naxes; a++) {
        if (a)
            sb_putc(&declared, ',');
        json_string(&declared, s->axes[a].name);
        sb_puts(&declared, ":[");
        for (int v = 0; v < s->axes[a].nvals; v++) {
            const AxisValue *av = &s->axes[a].vals[v];
            if (v)
                sb_putc(&declared, ',');
            if (av->v.kind == VAL_STR)
                json_string(&declared, av->text);
            else
                sb_puts(&declared, av->text);
        }
        sb_putc(&declared, ']');
    }
    sb_putc(&declared, '}');
    const DeviceInfo *d0 = &infos[devs[0]];
    env = (RunEnv){.spec_name = s->name, .spec_path = s->path, .gpu_name = d0->name, .gpu_uuid = d0->uuid,
                   .cc = facts.cc, .sm_count = d0->sm_count, .l2_bytes = d0->l2_bytes,
                   .mem_bytes = d0->mem_bytes, .clock_mhz = d0->clock_khz / 1000,
                   .mem_clock_mhz = d0->mem_clock_khz / 1000, .peak_gbs = d0->peak_gbs,
                   .driver_version = d0->driver_version, .nvrtc_version = nvrtc, .kvx_version = KVX_VERSION,
                   .arch = facts.arch, .hostname = host, .command = sb_str(&cmd), .measure_json = mjson,
                   .started_at = started, .baseline_json = sb_str(&basej),
                   .axes_json = sb_str(&declared)};
    int64_t run_id = 0;
    if (rc == 0 && store_begin_run(st, &env, &run_id, &err) != 0) {
        kvx_error_print(&err, stderr);
        kvx_error_clear(&err);
        rc = 3;
    }

    Worker workers[RUN_MAX_DEVICES];
    memset(workers, 0, sizeof workers);
    int nworkers = 0;
    for (int i = 0; rc == 0 && i < ndev; i++) {
        if (worker_start(&workers[i], devs[i], &err) != 0) {
            kvx_error_print(&err, stderr);
            kvx_error_clear(&err);
            continue;
        }
        nworkers++;
    }
    if (rc == 0 && nworkers == 0) {
        fprintf(stderr, "kvx run: no worker started: measuring needs a working GPU\n");
        rc = 1;
    }

    int64_t *variant_ids = xcalloc((size_t)p.nsrcs, sizeof(int64_t));
    Tally tally = {0};
    tally.total = ncases;
    int tty = isatty(STDERR_FILENO);
    /* Workload groups (contiguous after the sort) go whole to one worker: it
     * then generates each input once, keeps the group's host references, and
     * holds the baseline's output for the differential check. */
    int *gstart = xmalloc(sizeof(int) * (size_t)(ncases + 1));
    int ngroups = 0, next_group = 0;
    for (int i = 0; i < ncases; i++)
        if (i == 0 || strcmp(cases[i].workload_key, cases[i - 1].workload_key) != 0)
            gstart[ngroups++] = i;
    gstart[ngroups] = ncases;
    unsigned char *gbase = xcalloc((size_t)(ngroups ? ngroups : 1), 1);
    Range orphan[RUN_MAX_DEVICES];
    int norphans = 0;
    for (int g = 0; g < ngroups; g++)
        gbase[g] = cases[gstart[g]].is_baseline; /* the baseline sorts first */
    int *live = xcalloc((size_t)(ncases ? ncases : 1), sizeof(int)); /* 1 = handed out */
    double (*mvals)[3] = xcalloc((size_t)(ncases ? ncases : 1), sizeof *mvals);
    CaseGeom *geoms = xcalloc((size_t)(ncases ? ncases : 1), sizeof *geoms);
    double *medians = xmalloc(sizeof(double) * (size_t)(ncases ? ncases : 1));
    for (int i = 0; i < ncases; i++)
        medians[i] = NAN;
    CaseDesc *desc = xmalloc(sizeof *desc);

    while (rc == 0 && tally.done < ncases && nworkers > 0) {
        /* Hand out cases to idle workers, in order, as their sources become ready. */
        for (int w = 0; w < ndev; w++) {
            Worker *wk = &workers[w];
            if (!wk->pid || wk->busy >= 0)
                continue;
            if (wk->cur >= wk->end) {
                if (norphans > 0) {
                    /* the rest of a group whose worker could not be restarted */
                    norphans--;
                    wk->cur = orphan[norphans].cur;
                    wk->end = orphan[norphans].end;
                    wk->group = orphan[norphans].group;
                } else if (next_group < ngroups) {
                    wk->cur = gstart[next_group];
                    wk->end = gstart[next_group + 1];
                    wk->group = next_group++;
                } else {
                    continue;
                }
            }
            RunCase *c = &cases[wk->cur];
            int ji = comp.job_of[c->src];
            pthread_mutex_lock(&comp.mu);
            while (!comp.ready[ji] && !comp.finished)
                pthread_cond_wait(&comp.cv, &comp.mu);
            int ready = comp.ready[ji];
            pthread_mutex_unlock(&comp.mu);
            if (!ready) {
                kvx_error_print(&comp.err, stderr);
                rc = 3;
                break;
            }
            JitJob *j = &comp.jobs[ji];
            if (!variant_ids[c->src]) {
                char *code_json = axes_json(&p, c->point, p.srcs[c->src].code_axes);
                StrBuf ij;
                sb_init(&ij);
                if (j->ok && j->cubin) {
                    /* The SASS facts go with the results so tables can show them. */
                    InspectFacts f;
                    KvxError ie = {0};
                    inspect_job(j, &f, &ie);
                    kvx_error_clear(&ie);
                    inspect_to_json(&f, &ij);
                }
                VariantRow vr = {.spec_name = s->name, .source_hash = p.srcs[c->src].hash,
                                 .label = p.srcs[c->src].label, .code_axes_json = code_json,
                                 .arch = facts.arch, .options = opts_text, .compile_ok = j->ok,
                                 .compile_log = j->log, .compile_ms = j->compile_ms, .regs = j->regs,
                                 .spill_stores = j->spill_stores, .spill_loads = j->spill_loads,
                                 .smem_static = j->smem_static, .stack = j->stack,
                                 .inspect_json = ij.len ? sb_str(&ij) : NULL};
                if (store_put_variant(st, run_id, &vr, &variant_ids[c->src], &err) != 0) {
                    kvx_error_print(&err, stderr);
                    kvx_error_clear(&err);
                    rc = 3;
                }
                sb_free(&ij);
                free(code_json);
                if (rc)
                    break;
            }
            int idx = wk->cur++;
            CaseResult res;
            memset(&res, 0, sizeof res);
            res.id = idx;
            res.rel_err = NAN;
            int local = 0, dead = 0;
            if (!j->ok) {
                res.status = CASE_compile_error;
                snprintf(res.detail, sizeof res.detail, "NVRTC rejected %s (the log is stored with the variant)",
                         j->name);
                local = 1;
            } else {
                int have_base = gbase[wk->group];
                KvxError ce = {0};
                if (resolve_case(&p, c->point, j, c, &m, have_base, desc, mvals[idx], &ce) != 0) {
                    res.status = CASE_skipped;
                    if (ce.file[0])
                        snprintf(res.detail, sizeof res.detail, "%.200s:%d:%d: %.700s", ce.file, ce.line,
                                 ce.col, ce.msg);
                    else
                        snprintf(res.detail, sizeof res.detail, "%.1000s", ce.msg);
                    kvx_error_clear(&ce);
                    local = 1;
                } else {
                    desc->id = idx;
                    geoms[idx] = (CaseGeom){{desc->grid[0], desc->grid[1], desc->grid[2]},
                                            {desc->block[0], desc->block[1], desc->block[2]},
                                            {desc->cluster[0], desc->cluster[1], desc->cluster[2]},
                                            desc->smem};
                    if (case_write(wk->to, desc) != 0) {
                        res.status = CASE_fault;
                        snprintf(res.detail, sizeof res.detail, "the worker for GPU %d died before the case",
                                 wk->device);
                        local = 1;
                        dead = 1;
                    } else {
                        wk->busy = idx;
                        wk->started = now_ms();
                        wk->timeout_ms = m.timeout_s * 1000;
                        live[idx] = 1;
                    }
                }
            }
            if (local) {
                CaseRow row;
                store_case_init(&row);
                RunCase *rcs = &cases[idx];
                row.key = rcs->key; row.spec_name = s->name; row.label = rcs->label;
                row.axes_json = rcs->axes_json; row.workload_json = rcs->workload_json;
                row.device_uuid = wk->info.uuid; row.status = status_name(res.status); row.detail = res.detail;
                if (store_put_case(st, run_id, variant_ids[rcs->src], &row, &err) != 0) {
                    kvx_error_print(&err, stderr);
                    kvx_error_clear(&err);
                    rc = 3;
                }
                tally.counts[res.status]++;
                tally.done++;
                if (!tty)
                    printf("%-13s %s  %s\n", status_name(res.status), rcs->label, res.detail);
                progress(&tally, t0, tty);
                if (dead) {
                    worker_stop(wk, 1);
                    if (worker_start(wk, wk->device, &err) != 0) {
                        kvx_error_print(&err, stderr);
                        kvx_error_clear(&err);
                        nworkers--;
                        if (wk->cur < wk->end)
                            orphan[norphans++] = (Range){wk->cur, wk->end, wk->group};
                        wk->cur = wk->end;
                        continue;
                    }
                }
                w--; /* this worker is still idle: give it the next case */
            }
        }
        if (rc)
            break;

        /* Wait for a result or a timeout. */
        struct pollfd pfd[RUN_MAX_DEVICES];
        int map[RUN_MAX_DEVICES], npfd = 0;
        double soonest = 1e18;
        for (int w = 0; w < ndev; w++) {
            if (!workers[w].pid || workers[w].busy < 0)
                continue;
            pfd[npfd] = (struct pollfd){.fd = workers[w].from, .events = POLLIN};
            map[npfd++] = w;
            double left = workers[w].started + workers[w].timeout_ms - now_ms();
            if (left < soonest)
                soonest = left;
        }
        if (npfd == 0)
            continue;
        int wait_ms = soonest < 0 ? 0 : soonest > 1000 ? 1000 : (int)soonest + 1;
        int nready = poll(pfd, (nfds_t)npfd, wait_ms);
        if (nready < 0 && errno != EINTR) {
            fprintf(stderr, "kvx run: poll: %s\n", strerror(errno));
            rc = 3;
            break;
        }
        for (int k = 0; k < npfd; k++) {
            Worker *wk = &workers[map[k]];
            int idx = wk->busy;
            CaseResult res;
            memset(&res, 0, sizeof res);
            int got = 0, restart = 0;
            if (pfd[k].revents & (POLLIN | POLLHUP | POLLERR)) {
                if (result_read(wk->from, &res) == 0 && res.id == idx) {
                    got = 1;
                    /* A sticky fault ends the worker's context: it exits after saying so. */
                    restart = res.status == CASE_fault;
                } else {
                    memset(&res, 0, sizeof res);
                    res.status = CASE_fault;
                    res.rel_err = NAN;
                    worker_stop(wk, 1);
                    snprintf(res.detail, sizeof res.detail, "the worker for GPU %d died during the case",
                             wk->device);
                    got = 1;
                    restart = 1;
                }
            } else if (now_ms() - wk->started > wk->timeout_ms) {
                res.status = CASE_timeout;
                res.rel_err = NAN;
                snprintf(res.detail, sizeof res.detail, "no result after %.0f s; the worker was killed",
                         wk->timeout_ms / 1000);
                got = 1;
                restart = 1;
            }
            if (!got)
                continue;
            if (restart)
                worker_stop(wk, 1);
            RunCase *rcs = &cases[idx];
            CaseRow row;
            store_case_init(&row);
            row.key = rcs->key; row.spec_name = s->name; row.label = rcs->label;
            row.axes_json = rcs->axes_json; row.workload_json = rcs->workload_json;
            row.device_uuid = wk->info.uuid;
            row.status = status_name(res.status);
            row.detail = res.detail;
            DeviceInfo *di = &wk->info;
            for (int d = 0; d < 3; d++) {
                row.grid[d] = geoms[idx].grid[d];
                row.block[d] = geoms[idx].block[d];
                row.cluster[d] = geoms[idx].cluster[d];
            }
            row.smem = geoms[idx].smem;
            medians[idx] = res.status == CASE_ok && res.samples > 0 ? res.median_ms : NAN;
            int have_t = res.samples > 0;
            row.median_ms = have_t ? res.median_ms : NAN;
            row.min_ms = have_t ? res.min_ms : NAN;
            row.max_ms = have_t ? res.max_ms : NAN;
            row.mean_ms = have_t ? res.mean_ms : NAN;
            row.stdev_ms = have_t ? res.stdev_ms : NAN;
            row.noise = have_t ? res.noise : NAN;
            row.samples = res.samples;
            row.rel_err = res.rel_err;
            row.bytes = mvals[idx][0];
            row.atomics = mvals[idx][1];
            row.elements = mvals[idx][2];
            double sec = row.median_ms / 1000;
            row.gbs = have_t ? row.bytes / sec / 1e9 : NAN;
            row.pct_peak = have_t && di->peak_gbs > 0 ? row.gbs / di->peak_gbs * 100 : NAN;
            row.atomics_per_s = have_t ? row.atomics / sec : NAN;
            row.elems_per_s = have_t ? row.elements / sec : NAN;
            row.t_input_ms = res.t_input_ms;
            row.t_verify_ms = res.t_verify_ms;
            row.t_measure_ms = res.t_measure_ms;
            tally.t_input += res.t_input_ms;
            tally.t_verify += res.t_verify_ms;
            tally.t_measure += res.t_measure_ms;
            if (store_put_case(st, run_id, variant_ids[rcs->src], &row, &err) != 0) {
                kvx_error_print(&err, stderr);
                kvx_error_clear(&err);
                rc = 3;
            }
            tally.counts[res.status]++;
            tally.done++;
            wk->busy = -1;
            live[idx] = 0;
            if (!tty || res.status != CASE_ok) {
                if (tty)
                    fprintf(stderr, "\r%*s\r", 70, "");
                printf("%-13s %s", status_name(res.status), rcs->label);
                if (have_t)
                    printf("  %.4f ms", res.median_ms);
                if (res.status != CASE_ok && res.detail[0])
                    printf("  %s", res.detail);
                printf("\n");
                fflush(stdout);
            }
            progress(&tally, t0, tty);
            if (restart) {
                if (worker_start(wk, wk->device, &err) != 0) {
                    kvx_error_print(&err, stderr);
                    kvx_error_clear(&err);
                    nworkers--;
                    if (wk->cur < wk->end)
                        orphan[norphans++] = (Range){wk->cur, wk->end, wk->group};
                    wk->cur = wk->end;
                }
            }
        }
    }
    if (tty)
        fprintf(stderr, "\r%*s\r", 70, "");

    for (int w = 0; w < ndev; w++)
        worker_stop(&workers[w], 0);
    pthread_join(comp.thread, NULL);
    double wall = (now_ms() - t0) / 1000;
    double compile_ms = 0;
    int ncompiled = 0, nhit = 0;
    for (int i = 0; i < comp.n; i++) {
        JitJob *j = &comp.jobs[i];
        if (!j->cached)
            compile_ms += j->compile_ms;
        ncompiled++;
        nhit += j->cached;
    }
    StrBuf prof;
    sb_init(&prof);
    sb_printf(&prof, "{\"wall_s\":%.3f,\"compile_wall_s\":%.3f,\"compile_cpu_s\":%.3f,\"sources\":%d,"
              "\"cache_hits\":%d,\"input_s\":%.3f,\"verify_s\":%.3f,\"measure_s\":%.3f,\"cases\":%d}",
              wall, comp.wall_ms / 1000, compile_ms / 1000, ncompiled, nhit, tally.t_input / 1000,
              tally.t_verify / 1000, tally.t_measure / 1000, tally.done);
    if (run_id && store_end_run(st, run_id, wall, sb_str(&prof), &err) != 0) {
        kvx_error_print(&err, stderr);
        kvx_error_clear(&err);
    }

    printf("\n%d cases in %.1f s:", tally.done, wall);
    for (int k = 0; k < CASE_STATUS_COUNT; k++)
        if (tally.counts[k])
            printf(" %d %s", tally.counts[k], status_name(k));
    if (nstored)
        printf(" (%d stored earlier, skipped)", nstored);
    printf("\ntime    compile %.1f s wall (%d sources, %d from cache, %.1f s of NVRTC), inputs %.1f s, "
           "verify %.1f s, measure %.1f s\n", comp.wall_ms / 1000, ncompiled, nhit, compile_ms / 1000,
           tally.t_input / 1000, tally.t_verify / 1000, tally.t_measure / 1000);
    if (o.profile) {
        /* Summed over workers; with several workers these can exceed the wall. */
        double attributed = (tally.t_input + tally.t_verify + tally.t_measure) / 1000;
        printf("profile %s\n", sb_str(&prof));
        printf("        per case: inputs %.1f ms, verify %.1f ms, measure %.1f ms; %.1f s of worker time "
               "outside them (start, module loads, buffers, hand-over)\n",
               tally.done ? tally.t_input / tally.done : 0, tally.done ? tally.t_verify / tally.done : 0,
               tally.done ? tally.t_measure / tally.done : 0, wall * nworkers - attributed);
    }
    if (tally.done && rc == 0) {
        print_best(&p, cases, medians, ncases, base_mask);
        printf("results %s (run %lld); tabulate with: kvx table --db %s --spec %s --rows ... --cols ...\n",
               db_path, (long long)run_id, db_path, s->name);
    }
    sb_free(&prof);
    sb_free(&cmd);
    sb_free(&basej);
    sb_free(&declared);
    for (int i = 0; i < comp.n; i++)
        jit_job_release(&comp.jobs[i]);
    free(comp.jobs);
    free(comp.ready);
    free(comp.job_of);
    kvx_error_clear(&comp.err);
    pthread_mutex_destroy(&comp.mu);
    pthread_cond_destroy(&comp.cv);
    for (int i = 0; i < ncases; i++) {
        free(cases[i].label);
        free(cases[i].axes_json);
        free(cases[i].workload_json);
    }
    free(cases);
    free(variant_ids);
    free(live);
    free(mvals);
    free(geoms);
    free(gstart);
    free(gbase);
    free(medians);
    free(desc);
    free(cache);
    free(mjson);
    free(sel);
    store_close(st);
    plan_free(&p);
    spec_free(s);
    if (rc)
        return rc;
    return tally.counts[CASE_ok] == tally.done ? 0 : 1;
}
