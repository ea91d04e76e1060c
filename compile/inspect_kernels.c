/* inspect_kernels: a listing cut at its kernels, so that a variant of several
 * kernels (a spec's launch list) is inspected kernel by kernel.  PTX parts
 * start at each `.entry NAME(`; nvdisasm's at each "//---- .text.NAME ----"
 * section line, cuobjdump's at each "Function : NAME".  A part runs to the
 * next start; the lines before the first start (.target, the arch) go with
 * every part, since the SASS reader takes the arch from them.  Functions that
 * are not entry points (device functions ptxas did not inline) are parts of
 * their own, never asked for: their atomics count for no kernel. */
#include "inspect.h"

#include <stdio.h>
#include <string.h>

/* The length of the line at p, without its newline. */
static size_t line_len(const char *p)
{
    return strcspn(p, "\n");
}

/* Whether line [p, p+n) starts a function of the listing; its name into
 * name (cap bytes) when it does. */
static int part_start(const char *p, size_t n, int is_sass, char *name, size_t cap)
{
    char line[512];
    size_t k = n < sizeof line - 1 ? n : sizeof line - 1;
    memcpy(line, p, k);
    line[k] = 0;
    const char *at = NULL, *stop = "( \t\r";
    if (!is_sass) {
        at = strstr(line, ".entry ");
        at = at ? at + 7 : NULL;
    } else if (strncmp(line, "//-", 3) == 0 && (at = strstr(line, " .text."))) {
        at += 7;
    } else if ((at = strstr(line, "Function : "))) {
        at += 11;
    }
    if (!at)
        return 0;
    at += strspn(at, " \t");
    size_t len = strcspn(at, stop);
    if (len == 0 || len >= cap)
        return 0;
    memcpy(name, at, len);
    name[len] = 0;
    return 1;
}

int inspect_entries(const char *ptx, char names[][INSPECT_NAME_MAX], int max)
{
    int n = 0;
    for (const char *p = ptx ? ptx : ""; *p && n < max;) {
        size_t len = line_len(p);
        if (part_start(p, len, 0, names[n], INSPECT_NAME_MAX))
            n++;
        p += len + (p[len] == '\n');
    }
    return n;
}

int inspect_kernel_part(const char *listing, int is_sass, const char *kernel, StrBuf *out)
{
    const char *first = NULL, *from = NULL, *to = NULL;
    for (const char *p = listing ? listing : ""; *p;) {
        size_t len = line_len(p);
        char name[INSPECT_NAME_MAX];
        if (part_start(p, len, is_sass, name, sizeof name)) {
            if (!first)
                first = p;
            if (from && !to)
                to = p;
            if (!from && strcmp(name, kernel) == 0)
                from = p;
        }
        p += len + (p[len] == '\n');
    }
    if (!from)
        return -1;
    if (!to)
        to = from + strlen(from);
    sb_printf(out, "%.*s%.*s", (int)(first - listing), listing, (int)(to - from), from);
    return 0;
}

void inspect_kernel_facts(const JitJob *job, const char *sass, const char *kernel, InspectFacts *f)
{
    inspect_facts_init(f);
    StrBuf part;
    sb_init(&part);
    if (inspect_kernel_part(job->ptx, 0, kernel, &part) == 0)
        inspect_ptx(sb_str(&part), f);
    sb_reset(&part);
    if (sass && inspect_kernel_part(sass, 1, kernel, &part) == 0)
        inspect_sass(sb_str(&part), f);
    sb_free(&part);
    JitKernelFacts k[JIT_MAX_KERNELS];
    int n = jit_ptxas_kernels(job->log, k, JIT_MAX_KERNELS);
    for (int i = 0; i < n; i++)
        if (strcmp(k[i].name, kernel) == 0) {
            f->regs = k[i].regs;
            f->spill_stores = k[i].spill_stores;
            f->spill_loads = k[i].spill_loads;
            f->smem_static = k[i].smem_static;
        }
}

int inspect_listing_keep(const char *listing, int (*keep)(const char *name, void *ctx), void *ctx,
                         StrBuf *out)
{
    const char *first = NULL, *from = NULL;
    int kept = 0, on = 0;
    for (const char *p = listing ? listing : ""; *p;) {
        size_t len = line_len(p);
        char name[INSPECT_NAME_MAX];
        if (part_start(p, len, 1, name, sizeof name)) {
            if (!first) {
                first = p;
                sb_put(out, listing, (size_t)(first - listing));
            }
            if (on)
                sb_put(out, from, (size_t)(p - from));
            on = keep(name, ctx);
            kept += on;
            from = p;
        }
        p += len + (p[len] == '\n');
    }
    if (on)
        sb_puts(out, from);
    if (!first)
        sb_puts(out, listing ? listing : "");
    return kept;
}
