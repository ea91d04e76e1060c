/* inspect_sass: the SASS half of inspection.  A listing is parsed into
 * instructions, labels and functions; its atomics are counted by kind and the
 * patterns ptxas builds around them classified (the heuristics are listed in
 * inspect.h and documented where each is coded below).
 *
 * The grammar accepted is nvdisasm -c and cuobjdump -sass output: an
 * instruction line is an address comment ("/" "*0150*" "/"), an optional
 * predicate, the mnemonic with its modifiers and the operands up to ';'
 * (cuobjdump appends an encoding comment), e.g.
 *     @P0 REDG.E.ADD.STRONG.GPU desc[UR4][R2.64], R5 ;
 * labels stand alone (".L_x_0:") and branches name them (BRA `(.L_x_0));
 * cuobjdump's hex branch targets (BRA 0x170) are accepted as well. */
#include "inspect_internal.h"

#include <stddef.h>

/* ---- SASS: parsing ----------------------------------------------------------- */

enum { SITE_NONE, SITE_WARP, SITE_REDUX, SITE_SHFL };

static const char *const SASS_ATOMICS[] = {"ATOM", "ATOMG", "ATOMS", "RED", "REDG",
                                           "REDAS", NULL};
/* Ordering and rounding modifiers left out of a kind's short name. */
static const char *const SASS_DROP[] = {"E", "EF", "EL", "LU", "EU", "NA", "STRONG",
                                        "GPU", "RN", "FTZ", NULL};
static const char *const SASS_B16[] = {"F16", "BF16", "U16", "S16", "B16", "16", NULL};
static const char *const SASS_F16X2[] = {"F16x2", "F16_V2", NULL};
static const char *const SASS_BF16X2[] = {"BF16x2", "BF16_V2", NULL};
static const char *const SASS_VEC[] = {"128", "V2", "V4", "V8", NULL};
static const char *const SASS_ENDS[] = {"BRA", "EXIT", "RET", "JMP", "JMX", "BRX", "KILL",
                                        NULL};

static int is_atomic(const Insn *in) { return in_set(in->base, SASS_ATOMICS); }

static int has_mod(const Insn *in, const char *mod)
{
    const char *s = in->op;
    size_t n = strlen(mod);
    while ((s = strchr(s, '.'))) {
        s++;
        if (strncmp(s, mod, n) == 0 && (s[n] == '.' || s[n] == '\0'))
            return 1;
    }
    return 0;
}

static int is_cas(const Insn *in) { return has_mod(in, "CAS") || has_mod(in, "CAST"); }

static int predicated(const Insn *in)
{
    return in->pred[0] == '@' && strcmp(in->pred, "@PT") != 0;
}

/* A "Rxx"-style vector/packed modifier such as F32x4: letters, digits, 'x', digits. */
static int lane_vector(const char *tok)
{
    const char *x = strchr(tok, 'x');
    return x && x > tok && isdigit((unsigned char)x[-1]) && isdigit((unsigned char)x[1]);
}

static Insn *sass_push(SassScan *s)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 128;
        s->v = mem_realloc(s->v, (size_t)s->cap * sizeof *s->v);
    }
    Insn *in = &s->v[s->n++];
    memset(in, 0, sizeof *in);
    in->target_addr = -1;
    return in;
}

static void label_push(SassScan *s, const char *name, size_t n)
{
    if (s->nlab == s->caplab) {
        s->caplab = s->caplab ? 2 * s->caplab : 32;
        s->lab = mem_realloc(s->lab, (size_t)s->caplab * sizeof *s->lab);
    }
    SassLabel *l = &s->lab[s->nlab++];
    snprintf(l->name, sizeof l->name, "%.*s", (int)n, name);
    l->insn = s->n;             /* the next instruction pushed */
}

/* The address comment at q (slash-star, hex digits, star-slash): the address,
 * and q moved past it; -1 when absent.  cuobjdump's encoding comments start
 * with a space and "0x" and do not match. */
static long sass_addr(const char **q, const char *end)
{
    const char *s = *q;
    if (end - s < 5 || s[0] != '/' || s[1] != '*' || !isxdigit((unsigned char)s[2]))
        return -1;
    char *e;
    long a = strtol(s + 2, &e, 16);
    if (e + 1 >= end || e[0] != '*' || e[1] != '/')
        return -1;
    *q = e + 2;
    return a;
}

static void sass_insn(SassScan *s, int ln, int func, long addr, const char *q, const char *end)
{
    const char *semi = memchr(q, ';', (size_t)(end - q));
    if (semi)
        end = semi;
    q = skip_ws(q, end);
    if (q < end && *q == '{')
        q = skip_ws(q + 1, end);
    if (q >= end)
        return;
    Insn *in = sass_push(s);
    in->line = ln;
    in->func = func;
    in->addr = addr;
    in->labelled = s->nlab > 0 && s->lab[s->nlab - 1].insn == s->n - 1;
    if (*q == '@') {
        q = take_token(q, end, in->pred, sizeof in->pred);
        q = skip_ws(q, end);
    }
    q = take_token(q, end, in->op, sizeof in->op);
    size_t bl = strcspn(in->op, ".");
    snprintf(in->base, sizeof in->base, "%.*s", (int)bl, in->op);
    q = skip_ws(q, end);
    size_t al = (size_t)(end - q);
    while (al && isspace((unsigned char)q[al - 1]))
        al--;
    snprintf(in->args, sizeof in->args, "%.*s", (int)al, q);
    if (strcmp(in->base, "BRA") == 0) {
        const char *t = strstr(in->args, "`(");
        if (t) {
            t += 2;
            snprintf(in->target, sizeof in->target, "%.*s", (int)strcspn(t, ")"), t);
        } else if ((t = strstr(in->args, "0x"))) {
            in->target_addr = strtol(t, NULL, 16);
        }
    }
}

/* Does any instruction name label (`(name) in its operands: BRA, BSSY)? */
static int label_referenced(const SassScan *s, const char *name)
{
    size_t n = strlen(name);
    for (int i = 0; i < s->n; i++)
        for (const char *t = strstr(s->v[i].args, "`("); t; t = strstr(t + 2, "`("))
            if (strncmp(t + 2, name, n) == 0 && t[2 + n] == ')')
                return 1;
    return 0;
}

/* A basic block starts at a label something branches to (or reconverges at).
 * Listings may carry labels nothing names (nvdisasm 13.5 labels several
 * instructions of an NVRTC cubin that no branch targets): those must not cut
 * an atomic's window short. */
static void mark_block_starts(SassScan *s)
{
    for (int i = 0; i < s->n; i++)
        s->v[i].labelled = 0;
    for (int l = 0; l < s->nlab; l++)
        if (s->lab[l].insn < s->n && label_referenced(s, s->lab[l].name))
            s->v[s->lab[l].insn].labelled = 1;
}

/* Read a listing into instructions, labels and function boundaries.  A new
 * function starts at nvdisasm's "name:" / ".text.name:" lines and at
 * cuobjdump's "Function : name". */
void inspect_sass_scan(const char *text, SassScan *s)
{
    const char *cur = text, *line;
    size_t len;
    int func = 0;
    for (int ln = 0; next_line(&cur, &line, &len); ln++) {
        const char *end = line + len, *q = skip_ws(line, end);
        if (q >= end)
            continue;
        long addr = sass_addr(&q, end);
        if (addr >= 0) {
            sass_insn(s, ln, func, addr, q, end);
            continue;
        }
        char tok[128];
        const char *after = take_token(q, end, tok, sizeof tok);
        size_t tl = strlen(tok);
        if (!s->arch[0] && (strcmp(tok, ".target") == 0 || strcmp(tok, "arch") == 0)) {
            const char *a = strstr(after, "sm_");
            if (a && a < end)
                take_token(a, end, s->arch, sizeof s->arch);
        } else if (strstr(tok, "Function") == tok && memchr(q, ':', (size_t)(end - q))) {
            func++;
        } else if (tl > 1 && tok[tl - 1] == ':' && skip_ws(after, end) == end) {
            if (strncmp(tok, ".L", 2) == 0)
                label_push(s, tok, tl - 1);
            else
                func++;
        }
    }
    mark_block_starts(s);
    for (int i = 0; i < s->n; i++) {
        Insn *in = &s->v[i];
        if (!in->target[0])
            continue;
        for (int l = 0; l < s->nlab; l++)
            if (strcmp(s->lab[l].name, in->target) == 0 && s->lab[l].insn < s->n &&
                s->v[s->lab[l].insn].func == in->func) {
                in->target_addr = s->v[s->lab[l].insn].addr;
                break;
            }
    }
}

/* ---- SASS: classification ------------------------------------------------------ */

typedef struct Window {
    int vote, flo, popc, redux; /* index of the nearest one, -1 when absent */
    int shfl[8], nshfl;         /* SHFL.BFLY/DOWN steps, nearest first */
} Window;

/* The instructions before atomic i in its basic block (see inspect.h): back to
 * a label or an unconditional end of control flow, at most INSPECT_WINDOW. */
static Window sass_window(const SassScan *s, int i)
{
    Window w = {-1, -1, -1, -1, {0}, 0};
    for (int k = i; k > 0 && i - k < INSPECT_WINDOW; k--) {
        if (s->v[k].labelled)
            break;
        const Insn *in = &s->v[k - 1];
        if (in->func != s->v[i].func || (in_set(in->base, SASS_ENDS) && !predicated(in)))
            break;
        int j = k - 1;
        if ((strcmp(in->base, "VOTE") == 0 || strcmp(in->base, "VOTEU") == 0) &&
            has_mod(in, "ANY") && w.vote < 0)
            w.vote = j;
        else if ((strcmp(in->base, "FLO") == 0 || strcmp(in->base, "UFLO") == 0) && w.flo < 0)
            w.flo = j;
        else if ((strcmp(in->base, "POPC") == 0 || strcmp(in->base, "UPOPC") == 0) && w.popc < 0)
            w.popc = j;
        else if ((strcmp(in->base, "REDUX") == 0 || strcmp(in->base, "UREDUX") == 0) &&
                 w.redux < 0)
            w.redux = j;
        else if (strcmp(in->base, "SHFL") == 0 && (has_mod(in, "BFLY") || has_mod(in, "DOWN")) &&
                 w.nshfl < 8)
            w.shfl[w.nshfl++] = j;
    }
    return w;
}

/* Which aggregation feeds atomic i.  The leader-predicated atomic is the
 * common part: the warp's count (POPC) or reduced value (REDUX) or the root
 * of a shuffle tree is added by one lane. */
static int sass_site(const SassScan *s, int i, const Window *w)
{
    if (!predicated(&s->v[i]))
        return SITE_NONE;
    if (w->vote >= 0 && w->flo >= 0 && w->redux >= 0)
        return SITE_REDUX;
    if (w->vote >= 0 && w->flo >= 0 && w->popc >= 0)
        return SITE_WARP;
    if (w->nshfl >= 5)         /* log2(32) steps: a full-warp tree */
        return SITE_SHFL;
    return SITE_NONE;
}

/* "VOTEU.ANY+UFLO.U32+POPC" in listing order, marking each with ROLE_SEQ. */
static void site_seq(SassScan *s, const Window *w, int site, char *out, size_t cap)
{
    int idx[4], n = 0;
    if (w->vote >= 0)
        idx[n++] = w->vote;
    if (site != SITE_SHFL && w->flo >= 0)
        idx[n++] = w->flo;
    if (site == SITE_WARP)
        idx[n++] = w->popc;
    if (site == SITE_REDUX)
        idx[n++] = w->redux;
    for (int a = 0; a < n; a++)             /* tiny insertion sort into listing order */
        for (int b = a; b > 0 && idx[b] < idx[b - 1]; b--) {
            int t = idx[b]; idx[b] = idx[b - 1]; idx[b - 1] = t;
        }
    out[0] = '\0';
    for (int a = 0; a < n; a++) {
        s->v[idx[a]].role |= ROLE_SEQ;
        append(out, cap, "+", s->v[idx[a]].op);
    }
    if (site == SITE_SHFL) {
        char t[80];
        snprintf(t, sizeof t, "%dx%s", w->nshfl, s->v[w->shfl[0]].op);
        append(out, cap, "+", t);
        for (int k = 0; k < w->nshfl; k++)
            s->v[w->shfl[k]].role |= ROLE_SEQ;
    }
}

/* The back-branch that puts instruction i inside a loop: a branch later in the
 * same function whose target is at or before i.  Index, or -1. */
static int sass_back_branch(const SassScan *s, int i)
{
    for (int b = i + 1; b < s->n && s->v[b].func == s->v[i].func; b++)
        if (s->v[b].target_addr >= 0 && s->v[b].target_addr <= s->v[i].addr)
            return b;
    return -1;
}

/* The QSPC guarding a shared-memory atomic i (generic fallback), or -1. */
static int sass_qspc_before(const SassScan *s, int i)
{
    if (strcmp(s->v[i].base, "ATOMS") != 0)
        return -1;
    for (int k = i - 1; k >= 0 && s->v[k].func == s->v[i].func; k--)
        if (strcmp(s->v[k].base, "QSPC") == 0)
            return k;
    return -1;
}

/* The kind of atomic in: its opcode and the modifiers that say what it does
 * ("REDG.ADD.64"; .E, .STRONG, .GPU and the like dropped). */
static void sass_kind(const Insn *in, char *name, size_t n)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%s", in->op);
    snprintf(name, n, "%s", in->base);
    char *save = NULL, *tok = strtok_r(buf, ".", &save);
    while ((tok = strtok_r(NULL, ".", &save)))
        if (!in_set(tok, SASS_DROP))
            append(name, n, ".", tok);
}

/* Count atomic i into its opcode and modifier counters and its kind. */
static void sass_count(const Insn *in, InspectSass *c)
{
    static const struct { const char *base; size_t off; } OPS[] = {
        {"ATOM", offsetof(InspectSass, atom)},   {"ATOMG", offsetof(InspectSass, atomg)},
        {"ATOMS", offsetof(InspectSass, atoms)}, {"RED", offsetof(InspectSass, red)},
        {"REDG", offsetof(InspectSass, redg)},   {"REDAS", offsetof(InspectSass, redas)},
    };
    c->total++;
    for (size_t k = 0; k < sizeof OPS / sizeof OPS[0]; k++)
        if (strcmp(in->base, OPS[k].base) == 0)
            (*(int *)((char *)c + OPS[k].off))++;
    char buf[64], name[64];
    snprintf(buf, sizeof buf, "%s", in->op);
    snprintf(name, sizeof name, "%s", in->base);
    char *save = NULL, *tok = strtok_r(buf, ".", &save);
    int vec = 0;
    while ((tok = strtok_r(NULL, ".", &save))) {
        if (in_set(tok, SASS_F16X2))
            c->packed_f16x2++;
        else if (in_set(tok, SASS_BF16X2))
            c->packed_bf16x2++;
        else if (in_set(tok, SASS_B16))
            c->b16++;
        else if (in_set(tok, SASS_VEC) || lane_vector(tok))
            vec = 1;
        else if (strcmp(tok, "64") == 0)
            c->b64++;
        else if (strcmp(tok, "SYS") == 0)
            c->scope_sys++;
        else if (strcmp(tok, "SM") == 0 || strcmp(tok, "CTA") == 0)
            c->scope_cta++;
        if (!in_set(tok, SASS_DROP))
            append(name, sizeof name, ".", tok);
    }
    c->vector += vec;
    c->cas += is_cas(in);
    c->smem_inc += strcmp(in->base, "ATOMS") == 0 && has_mod(in, "POPC") && has_mod(in, "INC");
    inspect_kinds_add(c->kinds, &c->nkinds, &c->kinds_other, name);
}

/* The next site of f in space (in PTX order) that no SASS atomic has claimed,
 * from *next on; NULL when the PTX has no more (or was not read). */
static InspectSite *site_claim(InspectFacts *f, const char *space, int *next)
{
    for (; *next < f->nsites; (*next)++)
        if (strcmp(f->sites[*next].space, space) == 0 && !f->sites[*next].ptxas[0])
            return &f->sites[(*next)++];
    return NULL;
}

/* Record what ptxas did to atomic in at the site it belongs to. */
static void site_note(InspectFacts *f, const Insn *in, const char *ptxas, int next[2])
{
    int shared = strcmp(in->base, "ATOMS") == 0;
    InspectSite *st = site_claim(f, shared ? "shared" : "global", &next[shared]);
    if (!st)
        return;
    snprintf(st->ptxas, sizeof st->ptxas, "%s", ptxas);
    sass_kind(in, st->sass, sizeof st->sass);
    int one = strcmp(st->source, "per-thread") != 0 || strcmp(ptxas, "warp-aggregated") == 0 ||
              strcmp(ptxas, "REDUX") == 0 || strcmp(ptxas, "shuffle tree") == 0;
    st->per_warp = shared ? 0 : one ? 1 : 32;
}

/* Classify every atomic of a scanned listing into f (when f is not NULL) and
 * leave roles and notes on the instructions for inspect_mark. */
/* f's SASS facts and classification counts zeroed, its sites' ptxas paths
 * cleared, for a fresh classification of s. */
static void classify_reset(const SassScan *s, InspectFacts *f)
{
    memset(&f->sass, 0, sizeof f->sass);
    f->warp_aggregated = f->redux_aggregated = f->shfl_aggregated = 0;
    f->cas_loop = f->smem_hw_inc = f->generic_fallback = 0;
    f->agg_seq[0] = '\0';
    snprintf(f->sass.arch, sizeof f->sass.arch, "%s", s->arch);
    for (int k = 0; k < f->nsites; k++)
        f->sites[k].ptxas[0] = '\0';
}

/* A state-space query (QSPC) followed by a shared-memory atomic in the same
 * function: the fallback path of a generic atomic. */
static void classify_qspc(SassScan *s, int i, InspectFacts *f)
{
    Insn *in = &s->v[i];
    for (int k = i + 1; k < s->n && s->v[k].func == in->func; k++)
        if (strcmp(s->v[k].base, "ATOMS") == 0) {
            in->role |= ROLE_FALLBACK;
            f->generic_fallback++;
            break;
        }
}

/* Atomic i as one of a warp-aggregation site (sass_site); 1 when it is, with
 * the site's sequence in its note and *ptxas naming the path. */
static int classify_aggregated(SassScan *s, int i, InspectFacts *f, const char **ptxas)
{
    static const char *const WHAT[] = {"", "ptxas warp aggregation", "REDUX warp aggregation",
                                       "shuffle-tree aggregation (full warps)"};
    Insn *in = &s->v[i];
    Window w = sass_window(s, i);
    int site = sass_site(s, i, &w);
    if (site == SITE_NONE)
        return 0;
    char seq[96];
    site_seq(s, &w, site, seq, sizeof seq);
    snprintf(in->note, sizeof in->note, "%s: %s", WHAT[site], seq);
    if (!f->agg_seq[0])
        snprintf(f->agg_seq, sizeof f->agg_seq, "%s", seq);
    f->warp_aggregated += site == SITE_WARP;
    f->redux_aggregated += site == SITE_REDUX;
    f->shfl_aggregated += site == SITE_SHFL;
    *ptxas = site == SITE_WARP ? "warp-aggregated" : site == SITE_REDUX ? "REDUX" : "shuffle tree";
    return 1;
}

/* A CAS with a back-branch after it: the branch is marked as the loop's; 1
 * when the CAS is a CAS loop of its own (not a generic atomic's fallback,
 * q < 0). */
static int classify_cas_loop(SassScan *s, int i, int q, InspectFacts *f, const char **ptxas)
{
    Insn *in = &s->v[i];
    int b = is_cas(in) ? sass_back_branch(s, i) : -1;
    if (b < 0)
        return 0;
    s->v[b].role |= ROLE_LOOP;
    if (q >= 0)
        return 0;
    char t[64];
    snprintf(t, sizeof t, "CAS loop (back-branch at /*%04lx*/)", s->v[b].addr);
    append(in->note, sizeof in->note, "; ", t);
    f->cas_loop++;
    *ptxas = "CAS loop";
    return 1;
}

/* Atomic i: counted, classified, its note written and its site's path
 * claimed (next: the next unclaimed global and shared site). */
static void classify_atomic(SassScan *s, int i, InspectFacts *f, int next[2])
{
    Insn *in = &s->v[i];
    in->role |= ROLE_ATOMIC;
    sass_count(in, &f->sass);
    const char *ptxas = "none";
    int recognised = classify_aggregated(s, i, f, &ptxas);
    if (strcmp(in->base, "ATOMS") == 0 && has_mod(in, "POPC") && has_mod(in, "INC")) {
        append(in->note, sizeof in->note, "; ", "hardware shared-memory increment");
        f->smem_hw_inc++;
        ptxas = "HW increment";
        recognised = 1;
    }
    int q = sass_qspc_before(s, i);
    if (q >= 0) {
        in->role |= ROLE_FALLBACK;
        append(in->note, sizeof in->note, "; ",
               "shared-memory fallback of a generic atomic (after QSPC)");
        recognised = 1;
    }
    recognised |= classify_cas_loop(s, i, q, f, &ptxas);
    if (!recognised) {
        f->sass.plain++;
        append(in->note, sizeof in->note, "; ", "one per thread");
    }
    if (q < 0)      /* a fallback path belongs to its generic site */
        site_note(f, in, ptxas, next);
    if (has_mod(in, "F16x2") || has_mod(in, "BF16x2"))
        append(in->note, sizeof in->note, "; ", "native packed 16-bit");
}

void inspect_sass_classify(SassScan *s, InspectFacts *f)
{
    InspectFacts tmp;
    if (!f) {
        inspect_facts_init(&tmp);
        f = &tmp;
    }
    classify_reset(s, f);
    int next[2] = {0, 0};       /* the next unclaimed global and shared site */
    for (int i = 0; i < s->n; i++) {
        if (strcmp(s->v[i].base, "QSPC") == 0)
            classify_qspc(s, i, f);
        if (is_atomic(&s->v[i]))
            classify_atomic(s, i, f, next);
    }
    /* A generic atomic with a shared-memory fallback: its site's path. */
    for (int k = 0; f->generic_fallback && k < f->nsites; k++)
        if (strcmp(f->sites[k].space, "global") == 0 && strcmp(f->sites[k].ptxas, "none") == 0)
            snprintf(f->sites[k].ptxas, sizeof f->sites[k].ptxas, "generic-address");
}

int inspect_sass(const char *sass, InspectFacts *f)
{
    SassScan s = {0};
    inspect_sass_scan(sass ? sass : "", &s);
    int n = -1;
    if (s.n > 0) {
        inspect_sass_classify(&s, f);
        inspect_mem_sass(&s, &f->mem);
        f->has_sass = 1;
        n = f->sass.total;
    }
    free(s.v);
    free(s.lab);
    return n;
}
