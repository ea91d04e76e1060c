/* inspect_ptx: the PTX half of inspection.  atom/red instructions counted by
 * kind (operation, type, state space, scope, vector width), and CAS loops found
 * where the source wrote them (a bra after an atom.cas back to a label at or
 * before it).  The facts are in inspect.h; the scan records are shared with
 * inspect_mark through inspect_internal.h. */
#include "inspect_internal.h"

/* The modifiers of atom/red by what they say; anything else (.noftz, .L2::
 * cache_hint, .level::...) is left out of the kind's name. */
static const char *const PTX_SPACES[] = {"global", "shared", "shared::cta", "shared::cluster", NULL};
static const char *const PTX_SCOPES[] = {"cta", "cluster", "gpu", "sys", NULL};
static const char *const PTX_OPS[] = {"add", "inc", "dec", "min", "max", "and", "or",
                                      "xor", "exch", "cas", NULL};
static const char *const PTX_VECS[] = {"v2", "v4", "v8", NULL};
static const char *const PTX_T16[] = {"b16", "u16", "s16", "f16", "bf16", NULL};
static const char *const PTX_TPACKED[] = {"f16x2", "bf16x2", NULL};
static const char *const PTX_T32[] = {"b32", "u32", "s32", "f32", NULL};
static const char *const PTX_T64[] = {"b64", "u64", "s64", "f64", NULL};
static const char *const PTX_T128[] = {"b128", NULL};

static PtxLine *ptx_push(PtxScan *s, int line)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->v = mem_realloc(s->v, (size_t)s->cap * sizeof *s->v);
    }
    PtxLine *l = &s->v[s->n++];
    memset(l, 0, sizeof *l);
    l->line = line;
    l->loop_to = -1;
    return l;
}

/* Parse one atom/red mnemonic into p's counts and its canonical kind name
 * ("atom.global.sys.add.v4.f32": kind, space, non-gpu scope, op, vector, type). */
static void ptx_atomic(const char *mn, InspectPtx *p, int *is_cas)
{
    char buf[128], space[24] = "", scope[16] = "", op[8] = "", vec[4] = "", type[8] = "";
    snprintf(buf, sizeof buf, "%s", mn);
    char *save = NULL, *tok = strtok_r(buf, ".", &save);
    int is_red = strcmp(tok, "red") == 0;
    while ((tok = strtok_r(NULL, ".", &save))) {
        if (in_set(tok, PTX_SPACES))
            snprintf(space, sizeof space, "%s", strcmp(tok, "shared::cta") ? tok : "shared");
        else if (in_set(tok, PTX_SCOPES))
            snprintf(scope, sizeof scope, "%s", tok);
        else if (in_set(tok, PTX_OPS))
            snprintf(op, sizeof op, "%s", tok);
        else if (in_set(tok, PTX_VECS))
            snprintf(vec, sizeof vec, "%s", tok);
        else if (in_set(tok, PTX_T16) || in_set(tok, PTX_TPACKED) || in_set(tok, PTX_T32) ||
                 in_set(tok, PTX_T64) || in_set(tok, PTX_T128))
            snprintf(type, sizeof type, "%s", tok);
    }
    is_red ? p->red++ : p->atom++;
    if (!space[0])
        p->generic++;
    else if (strcmp(space, "global") == 0)
        p->global++;
    else if (strcmp(space, "shared") == 0)
        p->shared++;
    else
        p->cluster++;
    p->scope_cta += strcmp(scope, "cta") == 0;
    p->scope_cluster += strcmp(scope, "cluster") == 0;
    p->scope_sys += strcmp(scope, "sys") == 0;
    *is_cas = strcmp(op, "cas") == 0;
    p->cas += *is_cas;
    p->vector += vec[0] != '\0';
    p->b16 += in_set(type, PTX_T16);
    p->packed += in_set(type, PTX_TPACKED);
    p->b64 += in_set(type, PTX_T64);

    char name[64] = "";
    append(name, sizeof name, ".", is_red ? "red" : "atom");
    if (space[0])
        append(name, sizeof name, ".", space);
    if (scope[0] && strcmp(scope, "gpu") != 0)
        append(name, sizeof name, ".", scope);
    if (op[0])
        append(name, sizeof name, ".", op);
    if (vec[0])
        append(name, sizeof name, ".", vec);
    if (type[0])
        append(name, sizeof name, ".", type);
    inspect_kinds_add(p->kinds, &p->nkinds, &p->kinds_other, name);
}

/* What a function's code before an atomic says about who executes it. */
typedef struct SrcSeen {
    int ballot, popc, redux, shfl, bar;
    int active, lanemask;       /* activemask.b32; a read of %lanemask_lt/le/eq */
} SrcSeen;

/* tok is the instruction, args the rest of its line. */
static void seen_note(SrcSeen *w, const char *tok, const char *args, const char *end)
{
    /* A warp leader as cooperative groups write it (coalesced_threads(),
     * thread_rank() == 0, size()): the active mask and the lanes below. */
    if (strncmp(tok, "mov.", 4) == 0) {
        size_t n = (size_t)(end - args);
        for (size_t k = 0; k + 10 <= n && !w->lanemask; k++)
            w->lanemask = memcmp(args + k, "%lanemask_", 10) == 0;
    }
    if (strncmp(tok, "activemask.", 11) == 0)
        w->active = 1;
    else if (strncmp(tok, "vote.", 5) == 0 && strstr(tok, "ballot"))
        w->ballot = 1;
    else if (strncmp(tok, "popc.", 5) == 0)
        w->popc = 1;
    else if (strncmp(tok, "redux.sync", 10) == 0)
        w->redux = 1;
    else if (strncmp(tok, "shfl.", 5) == 0 && (strstr(tok, "bfly") || strstr(tok, "down")))
        w->shfl++;
    else if (strncmp(tok, "bar.sync", 8) == 0 || strncmp(tok, "barrier.sync", 12) == 0 ||
             strncmp(tok, "bar.red", 7) == 0)
        w->bar = 1;
}

/* A site for atomic mnemonic mn, executed after what w saw. */
static void site_add(InspectFacts *f, const char *mn, const SrcSeen *w)
{
    if (!f)
        return;
    if (f->nsites == INSPECT_MAX_SITES) {
        f->sites_more++;
        return;
    }
    InspectSite *st = &f->sites[f->nsites++];
    memset(st, 0, sizeof *st);
    int shared = strstr(mn, ".shared") != NULL;
    snprintf(st->space, sizeof st->space, "%s", shared ? "shared" : "global");
    int warp = ((w->ballot || w->active) && w->popc) || (w->active && w->lanemask) || w->redux ||
               w->shfl >= 5;
    const char *src = !shared && w->bar ? "one per block" : warp ? "one per warp" : "per-thread";
    snprintf(st->source, sizeof st->source, "%s", src);
}

/* Scan PTX: atomics, labels and branches, then CAS loops (a bra after the CAS
 * whose label is at or before it).  Inline asm blocks ("{ atom...; }") are
 * read like any other line. */
void inspect_ptx_scan(const char *ptx, InspectPtx *p, PtxScan *s, InspectFacts *f)
{
    SrcSeen seen = {0};
    const char *cur = ptx, *line;
    size_t len;
    for (int ln = 0; next_line(&cur, &line, &len); ln++) {
        const char *end = line + len, *q = skip_ws(line, end);
        while (q < end && (*q == '{' || *q == ' ' || *q == '\t'))
            q++;
        if (q >= end || (q + 1 < end && q[0] == '/' && q[1] == '/'))
            continue;
        char tok[128];
        const char *after = take_token(q, end, tok, sizeof tok);
        size_t tl = strlen(tok);
        if (tl > 1 && tok[tl - 1] == ':') {
            PtxLine *l = ptx_push(s, ln);
            l->label = 1;
            snprintf(l->name, sizeof l->name, "%.*s", (int)(tl - 1), tok);
            continue;
        }
        if (strcmp(tok, ".entry") == 0 || strcmp(tok, ".func") == 0 ||
            strcmp(tok, ".visible") == 0 || strcmp(tok, ".weak") == 0)
            memset(&seen, 0, sizeof seen);      /* a new function */
        if (tok[0] == '@')
            after = take_token(skip_ws(after, end), end, tok, sizeof tok);
        seen_note(&seen, tok, after, end);
        if (strncmp(tok, "atom.", 5) == 0 || strncmp(tok, "red.", 4) == 0) {
            PtxLine *l = ptx_push(s, ln);
            l->atomic = 1;
            ptx_atomic(tok, p, &l->cas);
            site_add(f, tok, &seen);
        } else if (strcmp(tok, "bra") == 0 || strncmp(tok, "bra.", 4) == 0) {
            PtxLine *l = ptx_push(s, ln);
            l->bra = 1;
            take_token(skip_ws(after, end), end, l->name, sizeof l->name);
        }
    }
    for (int i = 0; i < s->n; i++) {
        if (!s->v[i].cas)
            continue;
        for (int b = i + 1; b < s->n && s->v[i].loop_to < 0; b++) {
            if (!s->v[b].bra)
                continue;
            for (int l = 0; l < i; l++)
                if (s->v[l].label && strcmp(s->v[l].name, s->v[b].name) == 0) {
                    s->v[i].loop_to = b;
                    break;
                }
        }
        p->cas_loop += s->v[i].loop_to >= 0;
    }
}

int inspect_ptx(const char *ptx, InspectFacts *f)
{
    PtxScan s = {0};
    memset(&f->ptx, 0, sizeof f->ptx);
    f->nsites = f->sites_more = 0;
    inspect_ptx_scan(ptx ? ptx : "", &f->ptx, &s, f);
    free(s.v);
    if (!f->has_sass)
        inspect_mem_ptx(ptx, &f->mem);
    f->has_ptx = 1;
    return f->ptx.atom + f->ptx.red;
}
