/* inspect_mem: the global and shared loads and stores of a variant, by kind
 * and width, beside the atomics: whether a copy was vectorised (LDG.E.128 and
 * STG.E.128: 16 bytes a thread) and what the shared-memory traffic is.
 *
 * SASS: LDG/STG/LDS/STS, the width from the modifiers (.128 16 bytes, .64 8,
 * .U16/.S16 2, .U8/.S8 1, none 4, .256 32); the kind keeps E and the width,
 * the cache and ordering hints (.STRONG.GPU, .CONSTANT, .EF ...) are dropped.
 * PTX: ld/st in the global or shared state space, the width being the vector
 * count times the type's size (ld.global.v4.f32: 16 bytes); the kind keeps
 * the opcode, the space, .nc, the vector and the type.  Generic, local, param
 * and const accesses are not counted: ptxas may turn a generic access into a
 * global one, which only the SASS shows. */
#include "inspect_internal.h"
#include "core/json.h"

#include <stdio.h>

typedef enum { MEM_LD_GLOBAL, MEM_ST_GLOBAL, MEM_LD_SHARED, MEM_ST_SHARED, MEM_NONE } MemClass;

static void mem_reset(InspectMem *m, const char *source)
{
    memset(m, 0, sizeof *m);
    snprintf(m->source, sizeof m->source, "%s", source);
}

/* One more access of kind name, bytes wide, of class c. */
static void mem_add(InspectMem *m, MemClass c, const char *name, int bytes)
{
    int *count[] = {&m->ld_global, &m->st_global, &m->ld_shared, &m->st_shared};
    int *widest[] = {&m->ld_global_bytes, &m->st_global_bytes, &m->ld_shared_bytes, &m->st_shared_bytes};
    (*count[c])++;
    if (bytes > *widest[c])
        *widest[c] = bytes;
    for (int i = 0; i < m->nkinds; i++)
        if (!strcmp(m->kinds[i].name, name)) {
            m->kinds[i].count++;
            return;
        }
    if (m->nkinds == INSPECT_MAX_KINDS) {
        m->kinds_other++;
        return;
    }
    InspectMemKind *k = &m->kinds[m->nkinds++];
    snprintf(k->name, sizeof k->name, "%.*s", (int)sizeof k->name - 1, name);
    k->bytes = bytes;
    k->count = 1;
}

/* "." and tok after dst[cap], or nothing when it does not fit (a kind name
 * is short; inspect_internal.h's append draws -Wformat-truncation here). */
static void put_tok(char *dst, size_t cap, const char *tok)
{
    size_t n = strlen(dst), t = strlen(tok);
    if (n + 1 + t >= cap)
        return;
    dst[n] = '.';
    memcpy(dst + n + 1, tok, t + 1);
}

/* ---- SASS ------------------------------------------------------------------- */

static const char *const SASS_WIDTHS[] = {"U8", "S8", "U16", "S16", "64", "128", "256", NULL};
static const int SASS_BYTES[] = {1, 1, 2, 2, 8, 16, 32};

static MemClass sass_class(const char *base)
{
    static const char *const names[] = {"LDG", "STG", "LDS", "STS"};
    for (int c = 0; c < MEM_NONE; c++)
        if (!strcmp(base, names[c]))
            return (MemClass)c;
    return MEM_NONE;
}

void inspect_mem_sass(const SassScan *s, InspectMem *m)
{
    mem_reset(m, "SASS");
    for (int i = 0; i < s->n; i++) {
        const Insn *in = &s->v[i];
        MemClass c = sass_class(in->base);
        if (c == MEM_NONE)
            continue;
        char name[64], tok[64];
        snprintf(name, sizeof name, "%s", in->base);
        int bytes = 4;
        const char *p = strchr(in->op, '.');
        while (p) {
            const char *e = strchr(p + 1, '.');
            snprintf(tok, sizeof tok, "%.*s", (int)(e ? e - p - 1 : (long)strlen(p + 1)), p + 1);
            for (int w = 0; SASS_WIDTHS[w]; w++)
                if (!strcmp(tok, SASS_WIDTHS[w]))
                    bytes = SASS_BYTES[w];
            if (!strcmp(tok, "E") || in_set(tok, SASS_WIDTHS))
                put_tok(name, sizeof name, tok);
            p = e;
        }
        mem_add(m, c, name, bytes);
    }
}

/* ---- PTX -------------------------------------------------------------------- */

/* The size in bytes of a PTX type token (f32, b128, ...), 0 for another token. */
static int ptx_type_bytes(const char *t)
{
    if ((t[0] != 'b' && t[0] != 'u' && t[0] != 's' && t[0] != 'f') || !isdigit((unsigned char)t[1]))
        return !strcmp(t, "bf16") ? 2 : 0;
    int bits = atoi(t + 1);
    return bits == 8 || bits == 16 || bits == 32 || bits == 64 || bits == 128 ? bits / 8 : 0;
}

/* One PTX opcode token ("ld.global.nc.v4.f32"): its class, kind and width. */
static MemClass ptx_access(const char *op, char *name, size_t cap, int *bytes)
{
    int ld = !strncmp(op, "ld.", 3), st = !strncmp(op, "st.", 3);
    if (!ld && !st)
        return MEM_NONE;
    int global = 0, shared = 0, vec = 1, size = 0;
    snprintf(name, cap, "%s", ld ? "ld" : "st");
    for (const char *p = op + 2; *p == '.';) {
        const char *e = strchr(p + 1, '.');
        char tok[32];
        snprintf(tok, sizeof tok, "%.*s", (int)(e ? e - p - 1 : (long)strlen(p + 1)), p + 1);
        int keep = 0;
        if (!strcmp(tok, "global"))
            global = keep = 1;
        else if (!strncmp(tok, "shared", 6))
            shared = keep = 1;
        else if (!strcmp(tok, "nc"))
            keep = 1;
        else if (tok[0] == 'v' && isdigit((unsigned char)tok[1]))
            vec = atoi(tok + 1), keep = 1;
        else if (ptx_type_bytes(tok))
            size = ptx_type_bytes(tok), keep = 1;
        if (keep)
            put_tok(name, cap, tok);
        if (!e)
            break;
        p = e;
    }
    *bytes = vec * size;
    if (!global && !shared)
        return MEM_NONE;
    return (MemClass)((shared ? 2 : 0) + (st ? 1 : 0));
}

void inspect_mem_ptx(const char *ptx, InspectMem *m)
{
    mem_reset(m, "PTX");
    const char *p = ptx ? ptx : "", *line;
    size_t len;
    while (next_line(&p, &line, &len)) {
        const char *end = line + len, *q = skip_ws(line, end);
        char tok[64];
        if (q < end && *q == '@') {             /* a predicate guard */
            q = take_token(q, end, tok, sizeof tok);
            q = skip_ws(q, end);
        }
        take_token(q, end, tok, sizeof tok);
        char name[64];
        int bytes = 0;
        MemClass c = ptx_access(tok, name, sizeof name, &bytes);
        if (c != MEM_NONE)
            mem_add(m, c, name, bytes);
    }
}

/* ---- outputs ------------------------------------------------------------------ */

void inspect_memory(const InspectFacts *f, StrBuf *out)
{
    const InspectMem *m = &f->mem;
    if (!m->source[0])
        return;
    sb_printf(out, "%s: ", m->source);
    if (!m->nkinds) {
        sb_puts(out, "no global or shared loads or stores");
        return;
    }
    for (int i = 0; i < m->nkinds; i++)
        sb_printf(out, "%s%d %s (%d B)", i ? ", " : "", m->kinds[i].count, m->kinds[i].name,
                  m->kinds[i].bytes);
    if (m->kinds_other)
        sb_printf(out, ", %d of other kinds", m->kinds_other);
}

void inspect_mem_json(const InspectFacts *f, StrBuf *out)
{
    const InspectMem *m = &f->mem;
    if (!f->has_ptx && !f->has_sass) {
        sb_puts(out, ",\"mem\":null");
        return;
    }
    sb_printf(out, ",\"mem\":{\"source\":\"%s\",\"ld_global\":%d,\"st_global\":%d,\"ld_shared\":%d,"
                   "\"st_shared\":%d,\"ld_global_bytes\":%d,\"st_global_bytes\":%d,\"ld_shared_bytes\":%d,"
                   "\"st_shared_bytes\":%d,\"kinds\":{",
              m->source, m->ld_global, m->st_global, m->ld_shared, m->st_shared, m->ld_global_bytes,
              m->st_global_bytes, m->ld_shared_bytes, m->st_shared_bytes);
    for (int i = 0; i < m->nkinds; i++) {
        if (i)
            sb_putc(out, ',');
        json_put_str(out, m->kinds[i].name, JSON_BYTES);
        sb_printf(out, ":%d", m->kinds[i].count);
    }
    sb_printf(out, "},\"kinds_other\":%d}", m->kinds_other);
}
