/* worker_ref: the reference kernel of a case (CaseDesc.ref), run once per
 * reference key on the case's inputs and kept for every case that names the
 * same key (WORKER_MAX_REFERENCES of them, least recently used replaced).
 *
 * It runs in buffers of its own layout (the reference point's offsets):
 * inputs copied from the case's device copies, outputs from their init,
 * one untimed launch, its checked outputs kept on the device where it wrote
 * them (the variants compare with them there, worker_compare.c).  A reference that is
 * refused, faults or runs past the case's timeout makes the case skipped with
 * ref_failed set, so the parent skips every case of that key: no variant is
 * called ok against a reference that did not run.  After a fault or a
 * timeout the context is unusable (a kernel may still be running): the
 * result is sent and the worker exits. */
#include "worker_internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* 0, or -1 with res skipped and ref_failed; a sticky error ends the worker. */
static int ref_step(WorkerState *w, CaseResult *res, CUresult r, const char *call)
{
    if (r == CUDA_SUCCESS)
        return 0;
    res->status = CASE_skipped;
    res->ref_failed = 1;
    snprintf(res->detail, sizeof res->detail, "reference kernel: %s: %s (%s)", call,
             cudadl_error_name(r), cudadl_error_string(r));
    if (worker_is_sticky(r)) {
        case_result_write(w->out_fd, res);
        _exit(WORKER_EXIT_FAULT);
    }
    return -1;
}

/* Wait for the stream up to timeout_s, polling: a reference that never
 * returns must not take the worker's (the parent's) timeout for the case. */
static int ref_wait(WorkerState *w, const CaseDesc *c, CaseResult *res)
{
    double limit = wall_now_ms() + c->measure.timeout_s * 1000;
    for (;;) {
        CUresult r = cu.cuStreamQuery(w->stream);
        if (r == CUDA_SUCCESS)
            return 0;
        if (r != CUDA_ERROR_NOT_READY)
            return ref_step(w, res, r, "cuStreamQuery");
        if (wall_now_ms() > limit) {
            res->status = CASE_skipped;
            res->ref_failed = 1;
            snprintf(res->detail, sizeof res->detail, "reference kernel: no result after %.0f s "
                     "(timeout_s)", c->measure.timeout_s);
            case_result_write(w->out_fd, res);
            _exit(WORKER_EXIT_FAULT);
        }
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
}

static void slot_clear(RefCache *slot)
{
    for (int i = 0; i < CASE_MAX_BUFS; i++)
        if (slot->base[i])
            cu.cuMemFree(slot->base[i]);
    memset(slot, 0, sizeof *slot);
}

static RefCache *ref_slot(WorkerState *w, const char *key)
{
    RefCache *slot = &w->refs[0];
    for (int i = 0; i < WORKER_MAX_REFERENCES; i++) {
        if (w->refs[i].stamp && strcmp(w->refs[i].key, key) == 0)
            return &w->refs[i];
        if (w->refs[i].stamp < slot->stamp)
            slot = &w->refs[i];
    }
    slot_clear(slot);
    return slot;
}

/* Lay out and launch; the checked outputs go to slot.  0 or -1 (res set). */
static int ref_launch(WorkerState *w, const CaseDesc *c, const CaseLaunch *run, RefCache *slot, CaseResult *res)
{
    const CaseRef *r = &c->ref;
    CUdeviceptr base[CASE_MAX_BUFS] = {0}, ptr[CASE_MAX_BUFS];
    void *argv[CASE_MAX_ARGS];
    uint64_t scalars[CASE_MAX_ARGS];
    Module *m = NULL;
    int rc = -1;
    if (worker_function(w, r->cubin_path, r->kernel, &m, res) < 0) {
        res->status = CASE_skipped;
        res->ref_failed = 1;
        goto done;
    }
    for (int i = 0; i < c->nbufs; i++) {
        const CaseBuf *b = &c->bufs[i];
        uint64_t size = (uint64_t)elem_types[b->type].size, bytes = b->count * size;
        if (ref_step(w, res, cu.cuMemAlloc(&base[i], ((b->count + r->offset[i]) * size + 255) / 256 * 256),
                     "cuMemAlloc") < 0)
            goto done;
        ptr[i] = base[i] + r->offset[i] * size;
        /* Inputs from the case's device copies: no host-to-device copy per reference run. */
        /* Outputs and zeroed scratch start from their init by the variant's
         * own reset (a memset, or the copy of the init's host copy), moved
         * to this allocation. */
        int init = b->checked || b->scratch == CASE_SCRATCH_RESET;
        Reset set = run->reset[i];
        set.ptr = ptr[i];
        CUresult cr = init ? worker_reset_enqueue(w, &set)
                           : cu.cuMemcpyDtoDAsync(ptr[i], run->ptr[i], bytes, w->stream);
        if (bytes && ref_step(w, res, cr, init ? "output reset (init)" : "cuMemcpyDtoDAsync") < 0)
            goto done;
    }
    for (int i = 0; i < r->nargs; i++) {
        if (r->args[i].buf >= 0) {
            argv[i] = &ptr[r->args[i].buf];
            continue;
        }
        memcpy(&scalars[i], r->args[i].bytes, (size_t)r->args[i].size);
        argv[i] = &scalars[i];
    }
    if (ref_step(w, res, worker_launch_raw(w, m->fn, r->grid, r->block, r->cluster, r->smem, argv),
                 "launch") < 0 || ref_wait(w, c, res) < 0)
        goto done;
    for (int i = 0; i < c->nbufs; i++)
        if (c->bufs[i].checked) {
            slot->base[i] = base[i];
            slot->ptr[i] = ptr[i];
            base[i] = 0;
        }
    rc = 0;
done:
    for (int i = 0; i < c->nbufs; i++)
        if (base[i])
            cu.cuMemFree(base[i]);
    return rc;
}

const RefCache *worker_reference(WorkerState *w, const CaseDesc *c, const CaseLaunch *run, CaseResult *res)
{
    RefCache *slot = ref_slot(w, c->ref.key);
    if (slot->stamp) {
        slot->stamp = ++w->clock;
        return slot;
    }
    if (ref_launch(w, c, run, slot, res) < 0) {
        slot_clear(slot);
        return NULL;
    }
    memcpy(slot->key, c->ref.key, 65);
    slot->stamp = ++w->clock;
    res->ref_ran = 1;
    return slot;
}
