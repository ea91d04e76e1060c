/* inspect_fixture.h: what the inspect tests share (test_inspect.c: format
 * samples and nvcc PTX; test_inspect_sass.c: captured listings and the
 * disassembler plumbing): facts from a text, tag and kind checks, and the
 * checked-in files under tests/data/inspect.  Header-only, every function
 * static; the including test uses only some of them. */
#ifndef KVX_TESTS_INSPECT_FIXTURE_H
#define KVX_TESTS_INSPECT_FIXTURE_H


#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compile/inspect.h"

#ifndef KVX_SOURCE_DIR
#define KVX_SOURCE_DIR "."
#endif
#define DATA KVX_SOURCE_DIR "/tests/data/inspect"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wunused-const-variable"

/* sm_90-style uniform-datapath aggregation of a +1 counter. */
static const char SAMPLE_UNIFORM_AGG[] =
    "\t.target\tsm_90\n"
    "counter:\n"
    "        /*0100*/                   S2R R0, SR_LANEID ;\n"
    "        /*0110*/                   VOTEU.ANY UR4, UPT, PT ;\n"
    "        /*0120*/                   UPOPC UR6, UR4 ;\n"
    "        /*0130*/                   UFLO.U32 UR5, UR4 ;\n"
    "        /*0140*/                   ISETP.EQ.U32.AND P0, PT, R0, UR5, PT ;\n"
    "        /*0150*/               @P0 REDG.E.ADD.STRONG.GPU desc[UR8][R2.64], R5 ;\n"
    "        /*0160*/                   EXIT ;\n";


static InspectFacts sass_facts(const char *text)
{
    InspectFacts f;
    inspect_facts_init(&f);
    assert_true(inspect_sass(text, &f) >= 0);
    return f;
}

static InspectFacts ptx_facts(const char *text)
{
    InspectFacts f;
    inspect_facts_init(&f);
    inspect_ptx(text, &f);
    return f;
}

static int kind_count(const InspectKind *k, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(k[i].name, name) == 0)
            return k[i].count;
    return 0;
}

/* inspect_tags of f, malloc'd. */
static char *tags_of(const InspectFacts *f)
{
    StrBuf b;
    sb_init(&b);
    inspect_tags(f, &b);
    char *t = mem_strdup(sb_str(&b));
    sb_free(&b);
    return t;
}

static void assert_tags(const InspectFacts *f, const char *want)
{
    StrBuf b;
    sb_init(&b);
    inspect_tags(f, &b);
    assert_string_equal(sb_str(&b), want);
    sb_free(&b);
}

/* ==== 1. hand-written format samples (not captured output) ================== */


static char *load(const char *dir, const char *name, const char *ext)
{
    char path[1024];
    snprintf(path, sizeof path, DATA "/%s/%s.%s", dir, name, ext);
    return file_read(path, NULL);
}

static InspectFacts ptx_file(const char *name)
{
    char *t = load("ptx", name, "ptx");
    if (!t)
        fail_msg("%s/ptx/%s.ptx missing: regenerate with tests/data/inspect/capture.sh", DATA,
                 name);
    InspectFacts f = ptx_facts(t);
    free(t);
    return f;
}

#pragma GCC diagnostic pop

#endif
