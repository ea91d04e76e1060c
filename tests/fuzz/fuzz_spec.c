/* fuzz_spec: the spec loader and planner on arbitrary bytes.
 *
 * Each input is written as spec.yaml into a private directory that also holds
 * the test templates (count.cu, piece.cuh), so inputs that name `template:
 * count.cu` reach the planner and the template emitter too.  Properties: no
 * crash, no leak, every failure is a KVX_EINPUT error that names a
 * position in the spec or a template, and every emitted source opens with
 * its three header comment lines and nothing else before the body: no value
 * or name of the input breaks a line there (issue 22, item 1). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gen/plan.h"

#ifndef KVX_SOURCE_DIR
#define KVX_SOURCE_DIR "."
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[256];
static char spec_path[300];

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/kvx-fuzz-spec-%ld", (long)getpid());
    file_mkdir_p(dir);
    const char *files[] = {"count.cu", "piece.cuh"};
    for (int i = 0; i < 2; i++) {
        char src[512], dst[512];
        snprintf(src, sizeof src, "%s/tests/data/specs/%s", KVX_SOURCE_DIR, files[i]);
        snprintf(dst, sizeof dst, "%s/%s", dir, files[i]);
        size_t len;
        char *text = file_read(src, &len);
        if (text) {
            file_write_atomic(dst, text, len);
            free(text);
        }
    }
    snprintf(spec_path, sizeof spec_path, "%s/spec.yaml", dir);
}

/* The header of each source: three lines, each a // comment, then a blank
 * line; no control character but the newlines. */
static void check_headers(const Plan *p)
{
    for (int i = 0; i < p->nsrcs; i++) {
        const char *t = p->srcs[i].text, *end = strstr(t, "\n\n");
        if (!end)
            abort();
        int lines = 0;
        for (const char *q = t; q < end; q++) {
            if (q == t || q[-1] == '\n') {
                if (strncmp(q, "// ", 3) != 0)
                    abort();
                lines++;
            }
            if ((unsigned char)*q < 0x20 && *q != '\n')
                abort();
        }
        if (lines != 3)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dir[0])
        setup();
    if (file_write_atomic(spec_path, data, size) != 0)
        abort();
    KvxError err = {0};
    Spec *s = spec_load(spec_path, &err);
    if (s) {
        DeviceFacts f;
        facts_for_arch("sm_90", &f);
        Plan p;
        double points = 1;
        for (int a = 0; a < s->naxes; a++)
            points *= s->axes[a].nvals;
        if (points <= 4096 && plan_build(s, &f, &p, &err) == 0) {
            check_headers(&p);
            plan_free(&p);
        }
        spec_free(s);
    }
    if (err.code && err.code != KVX_EINPUT)
        abort();
    if (err.code && !err.file[0])
        abort();
    kvx_error_clear(&err);
    return 0;
}
