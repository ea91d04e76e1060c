/* case: statuses and the parent <-> worker wire format, through real pipes
 * between processes, including a stream delivered a few bytes at a time and a
 * peer that dies mid-frame. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host/case.h"

/* A CaseDesc with every field set to something distinct from its neighbours. */
static void desc_fill(CaseDesc *c)
{
    static const char op_name[] = "nanmax"; /* outside strs: case_write must copy it */
    memset(c, 0, sizeof *c);
    c->id = 0x123456789abLL;
    snprintf(c->cubin_path, sizeof c->cubin_path, "/tmp/kvx-cache/ab/abcdef/kernel.cubin");
    snprintf(c->kernel, sizeof c->kernel, "filter_count");
    c->nbufs = CASE_MAX_BUFS;
    for (int i = 0; i < c->nbufs; i++) {
        CaseBuf *b = &c->bufs[i];
        snprintf(b->name, sizeof b->name, "buf%d", i);
        b->type = (ElemTypeId)(i % ET_COUNT);
        b->count = 1000003ull * (uint64_t)(i + 1);
        b->offset = (uint64_t)i;
        b->init.kind = (InitKind)(i % INIT_COUNT_);
        b->init.value = i + 0.5;
        b->init.lo = -i;
        b->init.hi = 999 + i;
        b->init.exponent = 1.25;
        b->init.fraction = 0.125;
        b->init.length = 7 + i;
        b->init.seed = 0xfeedface00000000ull + (uint64_t)i;
        memset(b->input_key, 'a' + i, 64);
        b->checked = i % 3 == 0;
    }
    c->nargs = CASE_MAX_ARGS;
    for (int i = 0; i < c->nargs; i++) {
        CaseArg *a = &c->args[i];
        a->buf = i < c->nbufs ? i : -1;
        a->size = 1 << (i % 4);
        a->align = a->size;
        for (int k = 0; k < 8; k++)
            a->bytes[k] = (unsigned char)(i * 8 + k);
    }
    for (int d = 0; d < 3; d++) {
        c->grid[d] = 65536u + (uint32_t)d;
        c->block[d] = 32u << d;
        c->cluster[d] = (uint32_t)d + 1;
    }
    c->smem = 99 * 1024;
    /* a second and third launch (a launch list), and a scratch buffer */
    c->nnext = CASE_MAX_LAUNCHES - 1;
    for (int l = 0; l < c->nnext; l++) {
        CaseKernel *k = &c->next[l];
        snprintf(k->kernel, sizeof k->kernel, "filter_count_sum%d", l);
        k->nargs = 3;
        k->args[0] = (CaseArg){.buf = 1, .size = 8, .align = 8};
        k->args[1] = (CaseArg){.buf = -1, .size = 4, .align = 4, .bytes = {(unsigned char)l}};
        k->args[2] = (CaseArg){.buf = 2, .size = 8, .align = 8};
        k->grid[0] = k->block[0] = k->cluster[0] = 1;
        k->block[1] = k->block[2] = k->grid[1] = k->grid[2] = 1;
        k->smem = (uint32_t)l;
    }
    c->bufs[1].scratch = CASE_SCRATCH_UNINIT;
    c->nchecks = 3;
    for (int i = 0; i < c->nchecks; i++) {
        CaseCheck *k = &c->checks[i];
        k->buf = i * 3;
        k->rtol = 1e-5 * (i + 1);
        k->constant = (Value){.kind = VAL_INT, .i = -7 - i};
        snprintf(k->ref, sizeof k->ref, i == 0 ? "reduce" : i == 1 ? "" : "baseline");
        k->nargs = 4;
        k->args[0].v = (Value){.kind = VAL_STR, .s = op_name};
        k->argbuf[0] = -1;
        k->args[1].is_buf = 1;
        k->args[1].t = &elem_types[c->bufs[5].type];
        k->args[1].data = c; /* any host pointer: it must not travel */
        k->args[1].count = c->bufs[5].count;
        k->argbuf[1] = 5;
        k->args[2].v = (Value){.kind = VAL_INT, .i = 1024};
        k->argbuf[2] = -1;
        k->args[3].v = (Value){.kind = VAL_FLOAT, .d = 0.25};
        k->argbuf[3] = -1;
    }
    c->measure.warmup = 3;
    c->measure.min_samples = 10;
    c->measure.max_samples = 200;
    c->measure.noise = 0.02;
    c->measure.budget_ms = 2000;
    c->measure.flush_l2 = 1;
    c->measure.timeout_s = 30;
    c->measure.seed = 42;
    memset(c->workload_key, 'w', 64);
    c->is_baseline = 1;
}

/* What case_read must give for desc_fill's CaseDesc: the same bytes, with the
 * pointers rebuilt (t from the buffer's type, strings into strs, data NULL). */
static void desc_expected(const CaseDesc *sent, CaseDesc *want, const CaseDesc *got)
{
    memcpy(want, sent, sizeof *want);
    for (int i = 0; i < want->nchecks; i++) {
        CaseCheck *k = &want->checks[i];
        for (int j = 0; j < k->nargs; j++) {
            RefArg *a = &k->args[j];
            a->data = NULL;
            a->t = a->is_buf ? &elem_types[want->bufs[k->argbuf[j]].type] : NULL;
            if (a->v.kind == VAL_STR) {
                snprintf(k->strs[j], sizeof k->strs[j], "%s", a->v.s);
                a->v.s = got->checks[i].strs[j];
            }
        }
    }
}

static void result_fill(CaseResult *r)
{
    memset(r, 0, sizeof *r);
    r->id = 77;
    r->status = CASE_mismatch;
    snprintf(r->detail, sizeof r->detail, "out[3]: got 5, expected 7; timed anyway");
    r->median_ms = 0.125;
    r->min_ms = 0.1;
    r->max_ms = 0.5;
    r->mean_ms = 0.13;
    r->stdev_ms = 0.01;
    r->noise = 0.015;
    r->samples = 57;
    r->rel_err = NAN;
    r->t_input_ms = 12.5;
    r->t_verify_ms = 3.25;
    r->t_measure_ms = 250;
}

/* Run fn(fd, arg) in a child that writes into a pipe; return the read end. */
static int spawn_writer(void (*fn)(int fd, const void *arg), const void *arg, pid_t *pid)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    fflush(NULL);
    *pid = fork();
    assert_true(*pid >= 0);
    if (*pid == 0) {
        close(p[0]);
        fn(p[1], arg);
        _exit(0);
    }
    close(p[1]);
    return p[0];
}

static void reap(pid_t pid)
{
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

static void write_case(int fd, const void *arg)
{
    if (case_write(fd, arg) < 0)
        _exit(1);
}

static void write_result(int fd, const void *arg)
{
    if (case_result_write(fd, arg) < 0)
        _exit(1);
}

/* Everything readable from fd until EOF. */
static unsigned char *slurp(int fd, size_t *len)
{
    size_t cap = 1 << 16, n = 0;
    unsigned char *b = malloc(cap);
    ssize_t r;
    while ((r = read(fd, b + n, cap - n)) > 0) {
        n += (size_t)r;
        if (n == cap)
            b = realloc(b, cap *= 2);
    }
    *len = n;
    return b;
}

typedef struct Bytes {
    const unsigned char *p;
    size_t n;
} Bytes;

/* Deliver the bytes in 7-byte writes with pauses, so the reader sees short reads. */
static void write_trickle(int fd, const void *arg)
{
    const Bytes *b = arg;
    for (size_t off = 0; off < b->n; off += 7) {
        size_t k = b->n - off < 7 ? b->n - off : 7;
        if (write(fd, b->p + off, k) != (ssize_t)k)
            _exit(1);
        if (off % 1001 == 0)
            usleep(100);
    }
}

static void write_prefix(int fd, const void *arg)
{
    const Bytes *b = arg;
    if (write(fd, b->p, b->n) != (ssize_t)b->n)
        _exit(1);
}

static void test_status_names(void **state)
{
    (void)state;
    assert_string_equal(case_status_names[CASE_ok], "ok");
    assert_string_equal(case_status_names[CASE_skipped], "skipped");
    assert_int_equal(case_status_find("fault"), CASE_fault);
    assert_int_equal(case_status_find("timeout"), CASE_timeout);
    assert_int_equal(case_status_find("Fault"), -1);
    assert_int_equal(case_status_find(""), -1);
    assert_int_equal(case_status_find(NULL), -1);
    for (int i = 0; i < CASE_STATUS_COUNT; i++)
        assert_int_equal(case_status_find(case_status_names[i]), i);
}

static void test_case_round_trip(void **state)
{
    (void)state;
    CaseDesc *sent = malloc(sizeof *sent), *got = malloc(sizeof *got), *want = malloc(sizeof *want);
    desc_fill(sent);
    pid_t pid;
    int fd = spawn_writer(write_case, sent, &pid);
    memset(got, 0xcc, sizeof *got);
    assert_int_equal(case_read(fd, got), 0);
    reap(pid);
    /* nothing more in the stream: EOF reads as the peer's death */
    assert_int_equal(case_read(fd, want), -1);
    close(fd);
    desc_expected(sent, want, got);
    assert_memory_equal(want, got, sizeof *got);
    assert_string_equal(got->checks[2].args[0].v.s, "nanmax");
    assert_ptr_equal(got->checks[0].args[1].t, &elem_types[sent->bufs[5].type]);
    assert_null(got->checks[0].args[1].data);
    assert_int_equal(got->checks[1].constant.i, -8);
    CaseKernel k;
    case_kernel_at(got, 0, &k);
    assert_string_equal(k.kernel, "filter_count");
    assert_int_equal(k.nargs, CASE_MAX_ARGS);
    assert_int_equal(k.smem, 99 * 1024);
    case_kernel_at(got, 2, &k);
    assert_string_equal(k.kernel, "filter_count_sum1");
    assert_int_equal(k.args[1].bytes[0], 1);
    free(sent);
    free(got);
    free(want);
}

static void test_result_round_trip(void **state)
{
    (void)state;
    CaseResult sent, got;
    result_fill(&sent);
    pid_t pid;
    int fd = spawn_writer(write_result, &sent, &pid);
    assert_int_equal(case_result_read(fd, &got), 0);
    reap(pid);
    close(fd);
    assert_memory_equal(&sent, &got, sizeof got);
    assert_true(isnan(got.rel_err));
    assert_string_equal(got.detail, "out[3]: got 5, expected 7; timed anyway");
}

/* The encoded bytes of a case, as case_write produces them. */
static unsigned char *case_bytes(const CaseDesc *c, size_t *len)
{
    pid_t pid;
    int fd = spawn_writer(write_case, c, &pid);
    unsigned char *b = slurp(fd, len);
    reap(pid);
    close(fd);
    return b;
}

static void test_short_reads(void **state)
{
    (void)state;
    CaseDesc *sent = malloc(sizeof *sent), *got = malloc(sizeof *got), *want = malloc(sizeof *want);
    desc_fill(sent);
    size_t len;
    unsigned char *bytes = case_bytes(sent, &len);
    assert_true(len > sizeof *sent);
    Bytes b = {bytes, len};
    pid_t pid;
    int fd = spawn_writer(write_trickle, &b, &pid);
    assert_int_equal(case_read(fd, got), 0);
    reap(pid);
    close(fd);
    desc_expected(sent, want, got);
    assert_memory_equal(want, got, sizeof *got);
    free(bytes);
    free(sent);
    free(got);
    free(want);
}

static void test_peer_dies_mid_frame(void **state)
{
    (void)state;
    CaseDesc *c = malloc(sizeof *c);
    desc_fill(c);
    size_t len;
    unsigned char *bytes = case_bytes(c, &len);
    /* header only, half the body, all but the last byte */
    size_t cuts[] = {0, 4, 8, len / 2, len - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        Bytes b = {bytes, cuts[i]};
        pid_t pid;
        int fd = spawn_writer(write_prefix, &b, &pid);
        assert_int_equal(case_read(fd, c), -1);
        reap(pid);
        close(fd);
    }
    free(bytes);
    free(c);
}

static void test_wrong_frames(void **state)
{
    (void)state;
    /* a result where a case is expected */
    CaseResult r;
    result_fill(&r);
    CaseDesc *c = malloc(sizeof *c);
    pid_t pid;
    int fd = spawn_writer(write_result, &r, &pid);
    assert_int_equal(case_read(fd, c), -1);
    reap(pid);
    close(fd);

    /* a case whose indices point outside its arrays */
    desc_fill(c);
    c->checks[1].buf = c->nbufs;
    fd = spawn_writer(write_case, c, &pid);
    assert_int_equal(case_read(fd, c), -1);
    reap(pid);
    close(fd);

    /* more launches than a case has room for; a later launch's argument
     * outside the buffers */
    desc_fill(c);
    c->nnext = CASE_MAX_LAUNCHES;
    fd = spawn_writer(write_case, c, &pid);
    assert_int_equal(case_read(fd, c), -1);
    reap(pid);
    close(fd);

    desc_fill(c);
    c->next[1].args[2].buf = c->nbufs;
    fd = spawn_writer(write_case, c, &pid);
    assert_int_equal(case_read(fd, c), -1);
    reap(pid);
    close(fd);

    desc_fill(c);
    c->args[3].buf = 40;
    fd = spawn_writer(write_case, c, &pid);
    assert_int_equal(case_read(fd, c), -1);
    reap(pid);
    close(fd);

    /* a result with an unknown status */
    result_fill(&r);
    r.status = CASE_STATUS_COUNT;
    fd = spawn_writer(write_result, &r, &pid);
    CaseResult got;
    assert_int_equal(case_result_read(fd, &got), -1);
    reap(pid);
    close(fd);
    free(c);
}

static void test_write_to_dead_reader(void **state)
{
    (void)state;
    int p[2];
    assert_int_equal(pipe(p), 0);
    close(p[0]);
    CaseResult r;
    result_fill(&r);
    void (*old)(int) = signal(SIGPIPE, SIG_IGN);
    assert_int_equal(case_result_write(p[1], &r), -1);
    signal(SIGPIPE, old);
    close(p[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_names),
        cmocka_unit_test(test_case_round_trip),
        cmocka_unit_test(test_result_round_trip),
        cmocka_unit_test(test_short_reads),
        cmocka_unit_test(test_peer_dies_mid_frame),
        cmocka_unit_test(test_wrong_frames),
        cmocka_unit_test(test_write_to_dead_reader),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
