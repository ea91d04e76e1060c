/* run_loop: the supervisor's loop: cases handed to the workers in their
 * groups as their sources compile, results read, stored and printed as they
 * come, dead and hung workers replaced.  The session is run.c's. */
#include "run_internal.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/results.h"

/* ---- the loop: hand-out ------------------------------------------------------------ */

/* The unit u goes to worker slot w: noted for the profile. */
static void note_handout(RunSession *r, int w, const Range *u)
{
    RunProfile *pr = &r->prof;
    pr->wt[w].units++;
    if (pr->nhandout < RUN_HANDOUT_KEPT)
        pr->handout[pr->nhandout] = (HandoutRec){.group = u->group, .part = u->part, .nparts = u->nparts,
                                                 .cases = u->end - u->cur, .worker = w, .est_ms = u->est_ms,
                                                 .at_ms = wall_now_ms() - pr->loop_t0};
    pr->nhandout++;
}

/* Whether job k is compiled (and not held by $KVX_TEST_COMPILE_HOLD); under
 * r->comp.mu. */
static int job_ready(const Compiler *comp, int k)
{
    return comp->ready[k] && k != comp->hold;
}

/* Whether sources are still compiling (or one is held); under r->comp.mu. */
static int compiling(const Compiler *comp)
{
    return !comp->finished || comp->hold >= 0;
}

/* Whether case i's sources (its variant's, its reference kernel's) are
 * compiled; under r->comp.mu. */
static int case_ready(const RunSession *r, int i)
{
    const RunCase *c = &r->queue.cases[i];
    const Compiler *comp = &r->comp;
    int rsrc = c->ref_src;
    return job_ready(comp, comp->job_of[c->src]) && (rsrc < 0 || job_ready(comp, comp->job_of[rsrc]));
}

/* The test hooks' releases: a held source once every case that does not need
 * it is done, a held host reference once the cases before its first are
 * (run_ahead_release). */
static void holds_release(RunSession *r)
{
    int round_done = r->tally.done - (r->tally.total - r->queue.ncases);
    Compiler *comp = &r->comp;
    if (comp->hold >= 0 && round_done >= r->queue.ncases - comp->hold_cases) {
        pthread_mutex_lock(&comp->mu);
        comp->hold = -1;
        r->queue.nready_seen = -1;      /* bind_ready looks again */
        pthread_cond_broadcast(&comp->cv);
        pthread_mutex_unlock(&comp->mu);
    }
    run_ahead_release(r->ahead, round_done);
}

/* How far past the next unit the hand-out looks for one that can start. */
#define READY_LOOKAHEAD 256

/* The first unit not handed out, within READY_LOOKAHEAD, whose first case
 * can start now; -1 when none can (or every source is compiled). */
static int ready_unit(RunSession *r)
{
    int end = r->queue.nunits - r->queue.next_unit > READY_LOOKAHEAD ? r->queue.next_unit + READY_LOOKAHEAD : r->queue.nunits, found = -1;
    pthread_mutex_lock(&r->comp.mu);
    for (int k = r->queue.next_unit; k < end && found < 0 && compiling(&r->comp); k++)
        if (case_ready(r, r->queue.units[k].cur))
            found = k;
    pthread_mutex_unlock(&r->comp.mu);
    return found;
}

/* While sources still compile (a cold cache, a search's round), the next
 * unit whose first case can start now moves to the front, so that the GPU
 * works instead of waiting for the longest unit's sources; when none can,
 * the order stays longest first. */
static void ready_first(RunSession *r)
{
    if (r->queue.from_end)
        return;
    int k = ready_unit(r);
    if (k > r->queue.next_unit) {
        Range u = r->queue.units[k];
        memmove(&r->queue.units[r->queue.next_unit + 1], &r->queue.units[r->queue.next_unit], sizeof u * (size_t)(k - r->queue.next_unit));
        r->queue.units[r->queue.next_unit] = u;
    }
}

/* The rest of the worker's unit goes to the end of the hand-out when its
 * next case's sources still compile, the GPU would wait for them (nothing
 * queued) and another unit can start now: in a cold run a unit would
 * otherwise hold the GPU until its slowest source compiled (contention's
 * cooperative-groups sources: 2 s against 0.2 s).  Not for a differential
 * spec or one with a reference kernel, whose groups keep state in the
 * worker (the baseline's output, the reference's); and only with one
 * worker, whose groups then still go whole to one process (with several,
 * another could take the rest and make the group's input again).  1 when
 * deferred. */
static int defer_unready(RunSession *r, WorkerProc *wk)
{
    if (r->workers.ndev > 1 || wk->nq || r->plan.s->differential || r->plan.pref.kind != PLAN_REF_NONE || r->queue.from_end)
        return 0;
    pthread_mutex_lock(&r->comp.mu);
    int waits = compiling(&r->comp) && !case_ready(r, wk->cur);
    pthread_mutex_unlock(&r->comp.mu);
    if (!waits || ready_unit(r) < 0)
        return 0;
    r->queue.units = mem_realloc(r->queue.units, sizeof *r->queue.units * (size_t)(r->queue.nunits + 1));
    r->queue.units[r->queue.nunits++] = (Range){.cur = wk->cur, .end = wk->end, .group = wk->group, .nparts = 1};
    wk->cur = wk->end;
    return 1;
}

/* Within the worker's unit: when its next case's sources still compile, a
 * later case of the unit that can start goes first; never past or before a
 * baseline (the differential check's output comes first), and only among
 * cases of the same reference (a worker keeps one at a time). */
static void ready_case_first(RunSession *r, WorkerProc *wk)
{
    if (r->queue.cases[wk->cur].is_baseline)
        return;
    pthread_mutex_lock(&r->comp.mu);
    if (compiling(&r->comp) && !case_ready(r, wk->cur))
        for (int k = wk->cur + 1; k < wk->end; k++) {
            const RunCase *c = &r->queue.cases[k];
            if (c->is_baseline || strcmp(c->ref_key, r->queue.cases[wk->cur].ref_key))
                break;
            if (case_ready(r, k)) {
                RunCase x = r->queue.cases[k];
                r->queue.cases[k] = r->queue.cases[wk->cur];
                r->queue.cases[wk->cur] = x;
                break;
            }
        }
    pthread_mutex_unlock(&r->comp.mu);
}

/* Give an idle worker its next unit (an orphaned one first, then the units
 * longest first: run_order.c, a unit that can start first while sources
 * compile).  0 when none is left. */
static int next_group(RunSession *r, WorkerProc *wk)
{
    if (wk->cur < wk->end)
        return 1;
    const Range *u;
    if (r->queue.norphans > 0) {
        u = &r->queue.orphan[--r->queue.norphans];
    } else if (r->queue.next_unit < r->queue.nunits) {
        ready_first(r);
        u = &r->queue.units[r->queue.from_end ? r->queue.nunits - 1 - r->queue.next_unit++ : r->queue.next_unit++];
    } else {
        return 0;
    }
    wk->cur = u->cur, wk->end = u->end, wk->group = u->group;
    note_handout(r, (int)(wk - r->workers.w), u);
    return 1;
}

/* Restart a worker that died; a worker that cannot be restarted leaves the
 * rest of its group to the others. */
static void worker_replace(RunSession *r, WorkerProc *wk)
{
    if (run_worker_start(wk, wk->device, &r->err) == 0)
        return;
    kvx_error_print(&r->err, stderr);
    kvx_error_clear(&r->err);
    r->workers.n--;
    if (wk->cur < wk->end)
        r->queue.orphan[r->queue.norphans++] = (Range){.cur = wk->cur, .end = wk->end, .group = wk->group, .nparts = 0,
                                           .est_ms = NAN};
    wk->cur = wk->end;
}

/* Store the variant row of source k once (with its SASS facts, found on the
 * compile threads).  0, or 3 after a store error. */
static int variant_row(RunSession *r, const RunCase *c, const JitJob *j)
{
    if (r->store.variant_ids[c->src])
        return 0;
    double tp = wall_now_ms();
    const Source *so = &r->plan.p.srcs[c->src];
    char *code_json = run_axes_json(&r->plan.p, c->point, so->code_axes);
    /* The stored log names the template's lines beside the generated file's. */
    char *log = jit_log_map(j, j->log);
    JitKernelFacts kf[JIT_MAX_KERNELS];
    int nk = j->ok ? jit_ptxas_kernels(j->log, kf, JIT_MAX_KERNELS) : 0;
    StrBuf kernels;
    sb_init(&kernels);
    if (nk > 0)
        jit_kernels_json(kf, nk, &kernels);
    VariantRow vr = {.spec_name = r->plan.s->name, .source_hash = so->hash, .label = so->label,
                     .code_axes_json = code_json, .arch = r->plan.facts.arch, .options = r->plan.opts_text,
                     .compile_ok = j->ok, .compile_log = log, .compile_ms = j->compile_ms,
                     .regs = j->regs, .spill_stores = j->spill_stores, .spill_loads = j->spill_loads,
                     .smem_static = j->smem_static, .stack = j->stack, .inspect_json = j->inspect_json,
                     .kernels_json = nk > 0 ? sb_str(&kernels) : NULL};
    int rc = store_put_variant(r->store.st, r->store.run_id, &vr, &r->store.variant_ids[c->src], &r->err) ? run_fail(r, 3) : 0;
    sb_free(&kernels);
    free(code_json);
    free(log);
    run_part_add(&r->prof, RUN_PART_variants, &tp);
    return rc;
}

/* Bind case c, resolved at plan, to its compiled kernels j and rj (its
 * reference kernel's, or NULL): c->bound 1, or -1 with the reason it is
 * skipped in c->why. */
static void bind_one(RunSession *r, RunCase *c, const JitJob *j, const JitJob *rj)
{
    KvxError ce = {0};
    char cubin[1100], ref_cubin[1100];
    snprintf(cubin, sizeof cubin, "%s/kernel.cubin", j->dir);
    if (rj)
        snprintf(ref_cubin, sizeof ref_cubin, "%s/kernel.cubin", rj->dir);
    ResolveCase rcs = {.point = c->point, .ptx = j->ptx, .cubin_path = cubin,
                       .ref_ptx = rj ? rj->ptx : NULL, .ref_cubin_path = rj ? ref_cubin : NULL,
                       .symbol = j->symbol, .ref_symbol = rj ? rj->symbol : NULL,
                       .workload_key = c->workload_key, .is_baseline = c->is_baseline};
    Resolver rv = {&r->plan.p, &r->plan.pref, &r->plan.m, 0};
    r->prof.bound++;
    c->bound = 1;
    if (resolve_bind(&rv, &rcs, c->desc, &ce) == 0)
        return;
    c->bound = -1;
    StrBuf b;
    sb_init(&b);
    if (ce.file[0])
        sb_printf(&b, "%.200s:%d:%d: %.700s", ce.file, ce.line, ce.col, ce.msg);
    else
        sb_printf(&b, "%.1000s", ce.msg);
    c->why = sb_take(&b);
    kvx_error_clear(&ce);
}

/* Case idx's compiled jobs, when both are ready: 1 with *j and *rj (NULL
 * without a reference kernel); 0 not yet.  Under r->comp.mu. */
static int case_jobs(RunSession *r, int idx, JitJob **j, JitJob **rj)
{
    const RunCase *c = &r->queue.cases[idx];
    Compiler *comp = &r->comp;
    int ji = comp->job_of[c->src], rsrc = c->ref_src;
    int rji = rsrc >= 0 ? comp->job_of[rsrc] : ji;
    if (!job_ready(comp, ji) || !job_ready(comp, rji))
        return 0;
    *j = &comp->jobs[ji];
    *rj = rsrc >= 0 ? &comp->jobs[rji] : NULL;
    return 1;
}

/* The cases whose sources have compiled since the last look bound to their
 * kernels, and their variants' rows stored, so that a hand-out only sends:
 * the loop's first step each time round. */
static void bind_ready(RunSession *r)
{
    Compiler *comp = &r->comp;
    pthread_mutex_lock(&comp->mu);
    int n = comp->nready;
    pthread_mutex_unlock(&comp->mu);
    if (n == r->queue.nready_seen)
        return;
    r->queue.nready_seen = n;
    double tp = wall_now_ms();
    for (int i = 0; i < r->queue.ncases && r->rc == 0; i++) {
        RunCase *c = &r->queue.cases[i];
        JitJob *j, *rj;
        if (c->bound || !c->desc)
            continue;
        pthread_mutex_lock(&comp->mu);
        int ready = case_jobs(r, i, &j, &rj);
        pthread_mutex_unlock(&comp->mu);
        if (!ready || variant_row(r, c, j))
            continue;
        if (j->ok && (!rj || rj->ok))
            bind_one(r, c, j, rj);
    }
    run_part_add(&r->prof, RUN_PART_bind, &tp);
}

/* Case idx ready to send: bound (now, when its source compiled after the
 * loop last looked), its reference kernel not failed, the baseline's checks
 * dropped when its group has no baseline.  0, or -1 with res skipped (the
 * reason). */
static int case_ready_to_send(RunSession *r, const WorkerProc *wk, int idx, const JitJob *j, const JitJob *rj,
                              CaseResult *res)
{
    RunCase *c = &r->queue.cases[idx];
    if (!c->bound)
        bind_one(r, c, j, rj);
    const char *why = c->bound < 0 ? c->why : NULL;
    if (!why && c->desc->ref.present)
        why = run_ref_failed(&r->queue.refs_failed, c->desc->ref.key);
    if (why) {
        res->status = CASE_skipped;
        snprintf(res->detail, sizeof res->detail, "%s", why);
        return -1;
    }
    /* resolved with its group's baseline (session_resolve): its checks go
     * when the baseline is not run here (stored earlier, or taken) */
    if (r->plan.s->differential && !r->queue.gbase[wk->group])
        c->desc->nchecks = r->plan.s->nchecks < c->desc->nchecks ? r->plan.s->nchecks : c->desc->nchecks;
    return 0;
}

/* Queue case idx's resolved case on the worker.  1 handed over; 0 when the
 * worker died with a case in flight (the poll reports that one; this one goes
 * to its replacement); -1 when it died before it: res is a fault. */
static int send_one(RunSession *r, WorkerProc *wk, int idx, CaseResult *res)
{
    RunCase *c = &r->queue.cases[idx];
    CaseDesc *d = c->desc;
    d->id = idx;
    snprintf(d->label, sizeof d->label, "%s", c->label);
    d->keep_samples = r->o.keep_samples;
    snprintf(d->hostref_dir, sizeof d->hostref_dir, "%s", r->hostref_dir);
    if (case_write(wk->to, d) != 0) {
        if (wk->nq > 0) {
            wk->cur--;
            wk->broken = 1;
            return 0;
        }
        res->status = CASE_fault;
        snprintf(res->detail, sizeof res->detail, "the worker for GPU %d died before the case", wk->device);
        return -1;
    }
    if (wk->nq == 0)
        wk->started = wall_now_ms();
    wk->q[wk->nq++] = idx;
    /* A reference run first has a timeout of its own. */
    wk->timeout_ms = r->plan.m.timeout_s * 1000 * (d->ref.present ? 2 : 1);
    c->live = 1;
    return 1;
}

/* A case's row with what names it and its status; no measurement yet. */
static void row_identity(const RunSession *r, const WorkerProc *wk, int idx, const CaseResult *res, CaseRow *row)
{
    const RunCase *rcs = &r->queue.cases[idx];
    store_case_init(row);
    row->key = rcs->key, row->spec_name = r->plan.s->name, row->label = rcs->label;
    row->axes_json = rcs->axes_json, row->workload_json = rcs->workload_json;
    row->device_uuid = wk->info.uuid, row->status = case_status_names[res->status], row->detail = res->detail;
}

/* Case idx is done (its row stored, here or by another run): its resolved
 * case goes, unless the counter pass takes it. */
static void case_done(RunSession *r, int idx)
{
    RunCase *c = &r->queue.cases[idx];
    r->tally.done++;
    c->live = 0;
    if (r->o.counters || !c->desc)
        return;
    free(c->desc);
    c->desc = r->plan.desc[c->point] = NULL;
}

/* Case idx was stored by another run first: counted as done, not as this
 * run's. */
static void note_taken(RunSession *r, int idx)
{
    r->tally.taken++;
    r->queue.cases[idx].median_ms = NAN;
    if (!r->tty) {
        printf("%-13s %s  stored by another run first (its row is kept)\n", "taken", r->queue.cases[idx].label);
        fflush(stdout);
    }
    run_progress(&r->tally, r->t0, r->tty);
}

/* A case decided in the parent (compile error, skipped, a dead worker): its row. */
static void store_local(RunSession *r, const WorkerProc *wk, int idx, const CaseResult *res)
{
    const RunCase *rcs = &r->queue.cases[idx];
    CaseRow row;
    row_identity(r, wk, idx, res, &row);
    int put = store_put_case(r->store.st, r->store.run_id, r->store.variant_ids[rcs->src], &row, &r->err);
    case_done(r, idx);
    if (put < 0) {
        run_fail(r, 3);  /* not stored: not in the counts the summary prints */
        return;
    }
    if (put == 1) {
        note_taken(r, idx);
        return;
    }
    r->tally.counts[res->status]++;
    if (!r->tty)
        printf("%-13s %s  %s\n", case_status_names[res->status], rcs->label, res->detail);
    run_progress(&r->tally, r->t0, r->tty);
}

/* Skip the cases at the head of the worker's unit that another run on the
 * database has stored since the case list was made (two unsharded runs side
 * by side): measured once is enough.  A skipped baseline leaves the rest of
 * its group without the differential check, as a baseline stored earlier
 * does.  1 a case is left in the unit, 0 none, -1 after a store error. */
static int skip_stored(RunSession *r, WorkerProc *wk)
{
    for (; wk->cur < wk->end; wk->cur++) {
        const RunCase *c = &r->queue.cases[wk->cur];
        int has = store_has_case(r->store.st, c->key, &r->err);
        if (has < 0) {
            run_fail(r, 3);
            return -1;
        }
        if (!has)
            return 1;
        if (c->is_baseline)
            r->queue.gbase[wk->group] = 0;
        case_done(r, wk->cur);
        note_taken(r, wk->cur);
    }
    return 0;
}

/* The compiled jobs of the worker's next case, once ready.  1 ready; 0 not yet
 * (the worker is busy: its result must be read first); -1 the compile thread
 * failed. */
static int jobs_ready(RunSession *r, WorkerProc *wk, JitJob **j, JitJob **rj)
{
    Compiler *comp = &r->comp;
    double tp = wall_now_ms();
    pthread_mutex_lock(&comp->mu);
    int ready;
    /* A held job is waited for in the loop (holds_release), not here. */
    while (!(ready = case_jobs(r, wk->cur, j, rj)) && wk->nq == 0 && !comp->finished && comp->hold < 0)
        pthread_cond_wait(&comp->cv, &comp->mu);
    int pending = !ready && compiling(comp);
    pthread_mutex_unlock(&comp->mu);
    if (pending && wk->nq == 0)
        usleep(1000);   /* the loop goes round until the hold is released */
    run_part_add(&r->prof, RUN_PART_compile_wait, &tp);
    if (pending)
        return 0;
    if (!ready) {
        kvx_error_print(&comp->err, stderr);
        r->rc = 3;
        return -1;
    }
    return 1;
}

/* Hand the worker its next case.  1 when it may take another now, 0 when
 * not (full, busy waiting on a compile, nothing left, or an error: r->rc). */
static int past_stop(const RunSession *r)
{
    return r->stop_at_ms > 0 && wall_now_ms() >= r->stop_at_ms;
}

/* Whether a round stopped by its time (past_stop) has collected every case in flight. */
static int stopped_and_idle(const RunSession *r)
{
    if (!past_stop(r))
        return 0;
    for (int w = 0; w < r->workers.ndev; w++)
        if (r->workers.w[w].pid && r->workers.w[w].nq > 0)
            return 0;
    return 1;
}

static int handout_one(RunSession *r, WorkerProc *wk)
{
    if (run_stopping() || past_stop(r) || !wk->pid || wk->broken || wk->nq >= RUN_PIPELINE || !next_group(r, wk))
        return 0;
    int left = skip_stored(r, wk);
    if (left <= 0)
        return left == 0;
    ready_case_first(r, wk);
    if (defer_unready(r, wk))
        return 1;   /* the worker takes another unit */
    JitJob *j, *rj;
    if (jobs_ready(r, wk, &j, &rj) <= 0 || variant_row(r, &r->queue.cases[wk->cur], j))
        return 0;
    double tp = wall_now_ms();
    int idx = wk->cur++;
    CaseResult res;
    memset(&res, 0, sizeof res);
    res.id = idx;
    res.rel_err = NAN;
    int sent = -1;
    if (!j->ok) {
        res.status = CASE_compile_error;
        snprintf(res.detail, sizeof res.detail, "%s %s (the log is stored with the variant)",
                 j->crashed ? "the compile process died compiling" : "NVRTC rejected", j->name);
    } else if (rj && !rj->ok) {
        res.status = CASE_skipped;
        snprintf(res.detail, sizeof res.detail, "reference kernel: NVRTC rejected %s", rj->name);
    } else if (case_ready_to_send(r, wk, idx, j, rj, &res) == 0) {
        sent = send_one(r, wk, idx, &res);
    }
    run_part_add(&r->prof, RUN_PART_handout, &tp);
    if (sent >= 0)
        return sent;
    store_local(r, wk, idx, &res);
    if (res.status == CASE_fault) {
        run_worker_stop(wk, RUN_WORKER_KILL);
        worker_replace(r, wk);
    }
    run_part_add(&r->prof, RUN_PART_commit, &tp);
    return r->rc == 0;
}

/* ---- the loop: results ------------------------------------------------------------- */

/* Metrics that read scalar outputs, from the values the worker sent; one
 * that fails to evaluate (a division by a zero count) stays NaN, said once
 * per case on stderr. */
static void output_metrics(RunSession *r, int point, const CaseResult *res, CaseRow *row)
{
    double m[3];
    KvxError e = {0};
    if (resolve_metrics(&r->plan.p, point, res, m, &e) != 0) {
        fprintf(stderr, "kvx run: metric not computed: %s\n", e.msg);
        kvx_error_clear(&e);
        return;
    }
    row->bytes = m[0], row->atomics = m[1], row->elements = m[2];
}

/* The sample times that follow a result (--keep-samples) into r->store.samples.
 * 0, or -1 when the worker died before they came. */
static int samples_read(RunSession *r, WorkerProc *wk, const CaseResult *res)
{
    r->store.nsamples = 0;
    if (!res->samples_follow)
        return 0;
    if (res->samples_follow > r->store.samples_cap) {
        r->store.samples = mem_realloc(r->store.samples, sizeof *r->store.samples * (size_t)res->samples_follow);
        r->store.samples_cap = res->samples_follow;
    }
    if (case_samples_read(wk->from, r->store.samples, res->samples_follow) < 0)
        return -1;
    r->store.nsamples = res->samples_follow;
    return 0;
}

/* --keep-samples: the times as cases.samples_json, [ms,...] with 9
 * significant digits (the events' floats read back exactly); NULL when none
 * came. */
static char *samples_json(const RunSession *r)
{
    if (!r->store.nsamples)
        return NULL;
    StrBuf b;
    sb_init(&b);
    sb_puts(&b, "[");
    for (int i = 0; i < r->store.nsamples; i++)
        sb_printf(&b, "%s%.9g", i ? "," : "", r->store.samples[i]);
    sb_puts(&b, "]");
    return sb_take(&b);
}

/* The values the worker's result carries into row, by core/values.h's
 * table (median_ms ... noise NaN without samples). */
static void row_measured(CaseRow *row, const CaseResult *res)
{
    int timed = res->samples > 0;
    KVX_VALUES(STORE_FROM_RESULT)
}

/* The row of a case a worker answered (or that timed out, or whose worker
 * died: got_result 0).  store_put_case's 0, 1 (another run stored it first)
 * or -1 (r->rc is 3). */
static int store_result(RunSession *r, const WorkerProc *wk, int idx, const CaseResult *res, int got_result)
{
    const RunCase *rcs = &r->queue.cases[idx];
    CaseRow row;
    row_identity(r, wk, idx, res, &row);
    const CaseDesc *g = rcs->desc;     /* as sent */
    for (int d = 0; d < 3; d++)
        row.grid[d] = g->grid[d], row.block[d] = g->block[d], row.cluster[d] = g->cluster[d];
    row.smem = g->smem;
    int have_t = res->samples > 0;
    row_measured(&row, res);
    row.bytes = rcs->metrics[0], row.atomics = rcs->metrics[1], row.elements = rcs->metrics[2];
    if (got_result && r->plan.reads_outputs)
        output_metrics(r, rcs->point, res, &row);
    double sec = row.median_ms / 1000, peak = wk->info.peak_gbs;
    row.gbs = have_t ? row.bytes / sec / 1e9 : NAN;
    row.pct_peak = have_t && peak > 0 ? row.gbs / peak * 100 : NAN;
    row.atomics_per_s = have_t ? row.atomics / sec : NAN;
    row.elems_per_s = have_t ? row.elements / sec : NAN;
    char *cprof = got_result ? run_case_profile_json(res) : NULL;
    row.profile_json = cprof;
    char *sjson = got_result ? samples_json(r) : NULL;
    row.samples_json = sjson;
    row.throttled = res->sm_mhz > 0 && res->sm_max_mhz > 0 ? res->throttled : -1;
    int put = store_put_case(r->store.st, r->store.run_id, r->store.variant_ids[rcs->src], &row, &r->err);
    if (put < 0)
        run_fail(r, 3);
    free(cprof);
    free(sjson);
    return put;
}

/* What a result means for the tally, the summary and the terminal. */
static void note_result(RunSession *r, int idx, const CaseResult *res, int got_result)
{
    RunCase *rcs = &r->queue.cases[idx];
    rcs->median_ms = res->status == CASE_ok && res->samples > 0 ? res->median_ms : NAN;
    rcs->ran = res->status == CASE_ok || res->status == CASE_mismatch;
    if (got_result)
        run_profile_add_result(&r->prof, res);
    r->tally.t_input += res->t_input_ms;
    r->tally.t_verify += res->t_verify_ms;
    r->tally.t_measure += res->t_measure_ms;
    r->tally.counts[res->status]++;
    case_done(r, idx);
    if (!r->tty || res->status != CASE_ok) {
        if (r->tty)
            fprintf(stderr, "\r%*s\r", 70, "");
        printf("%-13s %s", case_status_names[res->status], rcs->label);
        if (res->samples > 0)
            printf("  %.4f ms", res->median_ms);
        if (res->status != CASE_ok && res->detail[0])
            printf("  %s", res->detail);
        printf("\n");
        fflush(stdout);
    }
    run_progress(&r->tally, r->t0, r->tty);
}

/* Read the worker's oldest case: its result, its death or its timeout.  1
 * with res filled (*got_result: the worker answered; *restart: it must be
 * replaced), 0 when there is nothing yet. */
static int read_result(RunSession *r, WorkerProc *wk, short revents, CaseResult *res, int *got_result,
                       int *restart)
{
    int idx = wk->q[0];
    memset(res, 0, sizeof *res);
    *got_result = *restart = 0;
    if (revents & (POLLIN | POLLHUP | POLLERR)) {
        if (case_result_read(wk->from, res) == 0 && res->id == idx && samples_read(r, wk, res) == 0) {
            *got_result = 1;
            /* A sticky fault ends the worker's context: it exits after saying
             * so; so may a reference kernel that failed. */
            *restart = res->status == CASE_fault || res->ref_failed;
            if (res->ref_failed)
                run_ref_fail(&r->queue.refs_failed, r->queue.cases[idx].desc->ref.key, res->detail);
            r->tally.refs_run += res->ref_ran;
            return 1;
        }
        /* A worker dead after a stop was asked for went with the same
         * signal (a terminal's ^C reaches the whole group): no fault. */
        if (run_stopping())
            return 0;
        memset(res, 0, sizeof *res);
        res->status = CASE_fault;
        res->rel_err = NAN;
        run_worker_stop(wk, RUN_WORKER_KILL);
        snprintf(res->detail, sizeof res->detail, "the worker for GPU %d died during the case", wk->device);
        *restart = 1;
        return 1;
    }
    if (wall_now_ms() - wk->started <= wk->timeout_ms)
        return 0;
    res->status = CASE_timeout;
    res->rel_err = NAN;
    snprintf(res->detail, sizeof res->detail, "no result after %.0f s; the worker was killed",
             wk->timeout_ms / 1000);
    *restart = 1;
    return 1;
}

/* One worker's poll outcome. */
static void collect_one(RunSession *r, WorkerProc *wk, short revents, double *tp)
{
    int idx = wk->q[0], got_result, restart;
    CaseResult res;
    if (!read_result(r, wk, revents, &res, &got_result, &restart))
        return;
    WorkerTime *wt = &r->prof.wt[wk - r->workers.w];
    if (!got_result)
        r->prof.lost_ms += wall_now_ms() - wk->started;
    wt->busy_ms += got_result ? run_case_busy_ms(&res) : wall_now_ms() - wk->started;
    wt->cases++;
    wt->last_ms = wall_now_ms();
    /* The next case in the queue is running now. */
    wk->q[0] = wk->q[1];
    wk->nq--;
    wk->started = wall_now_ms();
    if (restart) {
        run_worker_stop(wk, RUN_WORKER_KILL);
        /* What was queued behind it went with the process: hand it again (the
         * queue holds the last case handed out, cases[cur - 1]). */
        if (wk->nq > 0) {
            KVX_ASSERT(wk->q[0] == wk->cur - 1);
            wk->cur = wk->q[0];
        }
        wk->nq = 0;
    }
    int put = store_result(r, wk, idx, &res, got_result);
    if (put == 0) {
        note_result(r, idx, &res, got_result);
    } else {
        /* Not this run's row: done, but not in the counts (a store error has
         * set r->rc and ends the loop). */
        case_done(r, idx);
        if (put == 1)
            note_taken(r, idx);
    }
    run_part_add(&r->prof, RUN_PART_commit, tp);
    if (restart)
        worker_replace(r, wk);
}

/* Wait for a result or a timeout (at most a second), and take what came. */
static void collect(RunSession *r)
{
    struct pollfd pfd[RUN_MAX_DEVICES];
    int map[RUN_MAX_DEVICES], npfd = 0;
    double soonest = 1e18;
    for (int w = 0; w < r->workers.ndev; w++) {
        const WorkerProc *wk = &r->workers.w[w];
        if (!wk->pid || wk->nq == 0)
            continue;
        pfd[npfd] = (struct pollfd){.fd = wk->from, .events = POLLIN};
        map[npfd++] = w;
        double left = wk->started + wk->timeout_ms - wall_now_ms();
        soonest = left < soonest ? left : soonest;
    }
    if (npfd == 0)
        return;
    int wait_ms = soonest < 0 ? 0 : soonest > 1000 ? 1000 : (int)soonest + 1;
    double tp = wall_now_ms();
    int nready = poll(pfd, (nfds_t)npfd, wait_ms);
    run_part_add(&r->prof, RUN_PART_poll, &tp);
    if (nready < 0 && errno != EINTR) {
        fprintf(stderr, "kvx run: poll: %s\n", strerror(errno));
        r->rc = 3;
        return;
    }
    for (int k = 0; k < npfd; k++)
        collect_one(r, &r->workers.w[map[k]], pfd[k].revents, &tp);
}

void run_loop(RunSession *r)
{
    if (!r->prof.loop_t0)       /* the first round's start */
        r->prof.loop_t0 = wall_now_ms();
    while (r->rc == 0 && !run_stopping() && r->tally.done < r->tally.total && r->workers.n > 0 &&
           !stopped_and_idle(r)) {
        if (r->holds)
            holds_release(r);
        bind_ready(r);
        /* Cases to workers with room in their queue, in order, as their
         * sources become ready. */
        for (int w = 0; w < r->workers.ndev && r->rc == 0; w++)
            while (handout_one(r, &r->workers.w[w]))
                ;
        if (r->rc == 0)
            collect(r);
    }
    r->prof.loop_t1 = wall_now_ms();
    if (r->tty)
        fprintf(stderr, "\r%*s\r", 70, "");
    run_stage_end(&r->prof, RUN_STAGE_loop);
}

