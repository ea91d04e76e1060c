/* fuzz_spec: the spec loader and planner on arbitrary bytes.
 *
 * Each input is written as spec.yaml into a private directory that also holds
 * the test templates (count.cu, piece.cuh), so inputs that name `template:
 * count.cu` reach the planner and the template emitter too.  Properties: no
 * crash, no leak, and every failure is a KVX_EINPUT error that names a
 * position in the spec or a template. */
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
    mkdir_p(dir);
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
        if (points <= 4096 && plan_build(s, &f, &p, &err) == 0)
            plan_free(&p);
        spec_free(s);
    }
    if (err.code && err.code != KVX_EINPUT)
        abort();
    if (err.code && !err.file[0])
        abort();
    kvx_error_clear(&err);
    return 0;
}
