/* case: statuses and the wire format between the parent and its workers.
 *
 * Both ends are the same binary, so a CaseDesc travels as its own bytes in one
 * frame (tag, size, bytes): a field added to case.h travels without a change
 * here.  The frame's size must equal sizeof(CaseDesc), which catches a stream
 * out of step.  The few pointers in a CaseDesc (RefArg t and data, string
 * Values) are cleared in the copy that is sent and rebuilt by case_read. */
#include "case.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *const case_status_names[CASE_STATUS_COUNT] = {
#define X(n, d) #n,
    CASE_STATUSES(X)
#undef X
};

const char *const case_step_names[CASE_STEP_COUNT] = {
#define X(n, d) #n,
    CASE_STEPS(X)
#undef X
};

int case_status_find(const char *name)
{
    for (int i = 0; name && i < CASE_STATUS_COUNT; i++)
        if (strcmp(case_status_names[i], name) == 0)
            return i;
    return -1;
}

/* ---- framing -------------------------------------------------------------- */

#define TAG_CASE 0x45534143u   /* "CASE" */
#define TAG_RESULT 0x544c5352u /* "RSLT" */
#define TAG_SAMPLES 0x504d4153u /* "SAMP" */

static int write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

static int read_all(int fd, void *p, size_t n)
{
    char *c = p;
    while (n > 0) {
        ssize_t r = read(fd, c, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1; /* 0: EOF, the peer is gone */
        c += r;
        n -= (size_t)r;
    }
    return 0;
}

int case_wire_send(int fd, uint32_t tag, const void *data, uint32_t n)
{
    uint32_t head[2] = {tag, n};
    if (write_all(fd, head, sizeof head) < 0)
        return -1;
    return write_all(fd, data, n);
}

int case_wire_recv(int fd, uint32_t tag, void *data, uint32_t n)
{
    uint32_t head[2];
    if (read_all(fd, head, sizeof head) < 0)
        return -1;
    if (head[0] != tag || head[1] != n)
        return -1;
    return read_all(fd, data, n);
}

/* ---- cases ---------------------------------------------------------------- */

void case_kernel_at(const CaseDesc *c, int i, CaseKernel *k)
{
    if (i > 0) {
        KVX_ASSERT(i <= c->nnext);
        *k = c->next[i - 1];
        return;
    }
    memset(k, 0, sizeof *k);
    snprintf(k->kernel, sizeof k->kernel, "%s", c->kernel);
    k->nargs = c->nargs;
    memcpy(k->args, c->args, sizeof k->args);
    memcpy(k->grid, c->grid, sizeof k->grid);
    memcpy(k->block, c->block, sizeof k->block);
    memcpy(k->cluster, c->cluster, sizeof k->cluster);
    k->smem = c->smem;
}

int case_write(int fd, const CaseDesc *c)
{
    CaseDesc *w = mem_alloc(sizeof *w);
    memcpy(w, c, sizeof *w);
    for (int i = 0; i < w->nchecks && i < CASE_MAX_BUFS; i++) {
        CaseCheck *k = &w->checks[i];
        KVX_ASSERT(k->constant.kind != VAL_STR);
        for (int j = 0; j < k->nargs && j < CASE_MAX_REFARGS; j++) {
            RefArg *a = &k->args[j];
            if (a->v.kind == VAL_STR) {
                KVX_ASSERT(a->v.s && strlen(a->v.s) < sizeof k->strs[j]);
                memmove(k->strs[j], a->v.s, strlen(a->v.s) + 1);
            }
            a->v.s = NULL;
            a->t = NULL;
            a->data = NULL;
        }
    }
    int rc = case_wire_send(fd, TAG_CASE, w, (uint32_t)sizeof *w);
    free(w);
    return rc;
}

static int in_range(int v, int lo, int hi) { return v >= lo && v < hi; }

#define TERMINATE(s) ((s)[sizeof(s) - 1] = 0)

static int args_ok(const CaseArg *args, int n, int nbufs)
{
    for (int i = 0; i < n; i++)
        if (args[i].buf >= nbufs || (args[i].buf < 0 && !in_range(args[i].size, 1, 9)))
            return 0;
    return 1;
}

int case_read(int fd, CaseDesc *c)
{
    if (case_wire_recv(fd, TAG_CASE, c, (uint32_t)sizeof *c) < 0)
        return -1;
    TERMINATE(c->cubin_path);
    TERMINATE(c->kernel);
    TERMINATE(c->label);
    TERMINATE(c->workload_key);
    TERMINATE(c->hostref_dir);
    if (!in_range(c->nbufs, 0, CASE_MAX_BUFS + 1) || !in_range(c->nargs, 0, CASE_MAX_ARGS + 1) ||
        !in_range(c->nchecks, 0, CASE_MAX_BUFS + 1))
        return -1;
    for (int i = 0; i < c->nbufs; i++) {
        TERMINATE(c->bufs[i].name);
        TERMINATE(c->bufs[i].input_key);
        if (!in_range((int)c->bufs[i].type, 0, ET_COUNT))
            return -1;
    }
    if (!args_ok(c->args, c->nargs, c->nbufs) || !in_range(c->nnext, 0, CASE_MAX_LAUNCHES))
        return -1;
    for (int i = 0; i < c->nnext; i++) {
        CaseKernel *k = &c->next[i];
        TERMINATE(k->kernel);
        if (!in_range(k->nargs, 0, CASE_MAX_ARGS + 1) || !args_ok(k->args, k->nargs, c->nbufs))
            return -1;
    }
    if (c->ref.present) {
        TERMINATE(c->ref.key);
        TERMINATE(c->ref.cubin_path);
        TERMINATE(c->ref.kernel);
        if (!in_range(c->ref.nargs, 0, CASE_MAX_ARGS + 1) || !args_ok(c->ref.args, c->ref.nargs, c->nbufs))
            return -1;
    }
    for (int i = 0; i < c->nchecks; i++) {
        CaseCheck *k = &c->checks[i];
        TERMINATE(k->ref);
        if (!in_range(k->buf, 0, c->nbufs) || !in_range(k->nargs, 0, CASE_MAX_REFARGS + 1) ||
            (k->has_length && !in_range(k->length_buf, 0, c->nbufs)))
            return -1;
        for (int j = 0; j < k->nargs; j++) {
            RefArg *a = &k->args[j];
            TERMINATE(k->strs[j]);
            a->t = NULL;
            a->data = NULL;
            a->v.s = a->v.kind == VAL_STR ? k->strs[j] : NULL;
            if (a->is_buf) {
                if (!in_range(k->argbuf[j], 0, c->nbufs))
                    return -1;
                a->t = &elem_types[c->bufs[k->argbuf[j]].type];
            }
        }
        k->constant.s = NULL;
    }
    return 0;
}

int case_result_write(int fd, const CaseResult *r)
{
    return case_wire_send(fd, TAG_RESULT, r, (uint32_t)sizeof *r);
}

int case_result_read(int fd, CaseResult *r)
{
    if (case_wire_recv(fd, TAG_RESULT, r, (uint32_t)sizeof *r) < 0)
        return -1;
    TERMINATE(r->detail);
    if (!in_range((int)r->status, 0, CASE_STATUS_COUNT) || !in_range(r->samples_follow, 0, CASE_SAMPLES_KEPT_MAX + 1))
        return -1;
    return 0;
}

int case_samples_write(int fd, const double *t, int n)
{
    KVX_ASSERT(n > 0 && n <= CASE_SAMPLES_KEPT_MAX);
    return case_wire_send(fd, TAG_SAMPLES, t, (uint32_t)(sizeof *t * (size_t)n));
}

int case_samples_read(int fd, double *t, int n)
{
    KVX_ASSERT(n > 0 && n <= CASE_SAMPLES_KEPT_MAX);
    return case_wire_recv(fd, TAG_SAMPLES, t, (uint32_t)(sizeof *t * (size_t)n));
}
