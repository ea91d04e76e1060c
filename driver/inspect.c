/* inspect: atomic instructions in PTX and SASS, counted by kind, and the
 * patterns ptxas builds around them classified (see inspect.h for the list).
 *
 * Both analyses read text line by line into a small instruction array and
 * never modify the input; inspect_mark re-reads the same arrays to put a
 * gutter on the listing, so what --show marks is exactly what was counted.
 * The SASS grammar accepted is nvdisasm -c and cuobjdump -sass output: an
 * instruction line is an address comment ("/" "*0150*" "/"), an optional
 * predicate, the mnemonic with its modifiers and the operands up to ';'
 * (cuobjdump appends an encoding comment), e.g.
 *     @P0 REDG.E.ADD.STRONG.GPU desc[UR4][R2.64], R5 ;
 * labels stand alone (".L_x_0:") and branches name them (BRA `(.L_x_0));
 * cuobjdump's hex branch targets (BRA 0x170) are accepted as well. */
#include "inspect.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* ---- text helpers --------------------------------------------------------- */

/* The next line of text at *p: its start and length (no newline); *p moves past
 * it.  Returns 0 at the end. */
static int next_line(const char **p, const char **line, size_t *len)
{
    if (!**p)
        return 0;
    const char *s = *p, *e = strchr(s, '\n');
    if (!e)
        e = s + strlen(s);
    *line = s;
    *len = (size_t)(e - s);
    *p = *e ? e + 1 : e;
    return 1;
}

static const char *skip_ws(const char *s, const char *end)
{
    while (s < end && (*s == ' ' || *s == '\t' || *s == '\r'))
        s++;
    return s;
}

/* Copy the token at s (up to whitespace, ';', ',' or end) into out[cap]. */
static const char *take_token(const char *s, const char *end, char *out, size_t cap)
{
    size_t n = 0;
    while (s < end && !isspace((unsigned char)*s) && *s != ';' && *s != ',') {
        if (n + 1 < cap)
            out[n++] = *s;
        s++;
    }
    out[n] = '\0';
    return s;
}

static int in_set(const char *tok, const char *const *set)
{
    for (; *set; set++)
        if (strcmp(tok, *set) == 0)
            return 1;
    return 0;
}

static void kinds_add(InspectKind *kinds, int *nkinds, int *other, const char *name)
{
    for (int i = 0; i < *nkinds; i++)
        if (strcmp(kinds[i].name, name) == 0) {
            kinds[i].count++;
            return;
        }
    if (*nkinds == INSPECT_MAX_KINDS) {
        (*other)++;
        return;
    }
    snprintf(kinds[*nkinds].name, sizeof kinds[0].name, "%s", name);
    kinds[(*nkinds)++].count = 1;
}

static void append(char *dst, size_t cap, const char *sep, const char *s)
{
    size_t n = strlen(dst);
    snprintf(dst + n, cap - n, "%s%s", n ? sep : "", s);
}

void inspect_facts_init(InspectFacts *f)
{
    memset(f, 0, sizeof *f);
    f->regs = f->spill_stores = f->spill_loads = f->smem_static = -1;
}

void inspect_set_compile(InspectFacts *f, const JitJob *job)
{
    f->regs = job->regs;
    f->spill_stores = job->spill_stores;
    f->spill_loads = job->spill_loads;
    f->smem_static = job->smem_static;
}

/* ---- PTX ------------------------------------------------------------------- */

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

typedef struct PtxLine {
    int line;
    int atomic, cas;
    int label;                  /* this line defines label name */
    int bra;                    /* a bra whose target is name */
    char name[48];
    int loop_to;                /* for a CAS in a loop: the back-branch's line, else -1 */
} PtxLine;

typedef struct PtxScan {
    PtxLine *v;
    int n, cap;
} PtxScan;

static PtxLine *ptx_push(PtxScan *s, int line)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->v = xrealloc(s->v, (size_t)s->cap * sizeof *s->v);
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
    kinds_add(p->kinds, &p->nkinds, &p->kinds_other, name);
}

/* Scan PTX: atomics, labels and branches, then CAS loops (a bra after the CAS
 * whose label is at or before it).  Inline asm blocks ("{ atom...; }") are
 * read like any other line. */
static void ptx_scan(const char *ptx, InspectPtx *p, PtxScan *s)
{
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
        if (tok[0] == '@')
            after = take_token(skip_ws(after, end), end, tok, sizeof tok);
        if (strncmp(tok, "atom.", 5) == 0 || strncmp(tok, "red.", 4) == 0) {
            PtxLine *l = ptx_push(s, ln);
            l->atomic = 1;
            ptx_atomic(tok, p, &l->cas);
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
    ptx_scan(ptx ? ptx : "", &f->ptx, &s);
    free(s.v);
    f->has_ptx = 1;
    return f->ptx.atom + f->ptx.red;
}

/* ---- SASS: parsing ----------------------------------------------------------- */

enum { ROLE_ATOMIC = 1, ROLE_SEQ = 2, ROLE_LOOP = 4, ROLE_FALLBACK = 8 };
enum { SITE_NONE, SITE_WARP, SITE_REDUX, SITE_SHFL };

typedef struct Insn {
    int line;                   /* 0-based line of the listing */
    int func;                   /* function index */
    long addr;                  /* the offset in the address comment */
    int labelled;               /* a label precedes it: a basic block starts here */
    char pred[12];              /* "@P0", "@!UP1", "" */
    char op[64];                /* full mnemonic: "REDG.E.ADD.STRONG.GPU" */
    char base[16];              /* "REDG" */
    char args[96];              /* operands, without the ';' */
    char target[32];            /* branch target label, "" when none */
    long target_addr;           /* resolved branch target, -1 when none */
    int role;
    char note[128];             /* for atomics: what was recognised */
} Insn;

typedef struct SassLabel {
    char name[32];
    int insn;                   /* index of the instruction it labels */
} SassLabel;

typedef struct SassScan {
    Insn *v;
    int n, cap;
    SassLabel *lab;
    int nlab, caplab;
    char arch[16];
} SassScan;

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
        s->v = xrealloc(s->v, (size_t)s->cap * sizeof *s->v);
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
        s->lab = xrealloc(s->lab, (size_t)s->caplab * sizeof *s->lab);
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

/* Read a listing into instructions, labels and function boundaries.  A new
 * function starts at nvdisasm's "name:" / ".text.name:" lines and at
 * cuobjdump's "Function : name". */
static void sass_scan(const char *text, SassScan *s)
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
    kinds_add(c->kinds, &c->nkinds, &c->kinds_other, name);
}

/* Classify every atomic of a scanned listing into f (when f is not NULL) and
 * leave roles and notes on the instructions for inspect_mark. */
static void sass_classify(SassScan *s, InspectFacts *f)
{
    InspectFacts tmp;
    if (!f) {
        inspect_facts_init(&tmp);
        f = &tmp;
    }
    memset(&f->sass, 0, sizeof f->sass);
    f->warp_aggregated = f->redux_aggregated = f->shfl_aggregated = 0;
    f->cas_loop = f->smem_hw_inc = f->generic_fallback = 0;
    f->agg_seq[0] = '\0';
    snprintf(f->sass.arch, sizeof f->sass.arch, "%s", s->arch);

    for (int i = 0; i < s->n; i++) {
        Insn *in = &s->v[i];
        if (strcmp(in->base, "QSPC") == 0) {
            /* a state-space query followed by a shared-memory atomic: the
             * fallback path of a generic atomic */
            for (int k = i + 1; k < s->n && s->v[k].func == in->func; k++)
                if (strcmp(s->v[k].base, "ATOMS") == 0) {
                    in->role |= ROLE_FALLBACK;
                    f->generic_fallback++;
                    break;
                }
        }
        if (!is_atomic(in))
            continue;
        in->role |= ROLE_ATOMIC;
        sass_count(in, &f->sass);
        int recognised = 0;

        Window w = sass_window(s, i);
        int site = sass_site(s, i, &w);
        if (site != SITE_NONE) {
            static const char *const WHAT[] = {"", "ptxas warp aggregation",
                                               "REDUX warp aggregation",
                                               "shuffle-tree aggregation (full warps)"};
            char seq[96];
            site_seq(s, &w, site, seq, sizeof seq);
            snprintf(in->note, sizeof in->note, "%s: %s", WHAT[site], seq);
            if (!f->agg_seq[0])
                snprintf(f->agg_seq, sizeof f->agg_seq, "%s", seq);
            f->warp_aggregated += site == SITE_WARP;
            f->redux_aggregated += site == SITE_REDUX;
            f->shfl_aggregated += site == SITE_SHFL;
            recognised = 1;
        }
        if (strcmp(in->base, "ATOMS") == 0 && has_mod(in, "POPC") && has_mod(in, "INC")) {
            append(in->note, sizeof in->note, "; ", "hardware shared-memory increment");
            f->smem_hw_inc++;
            recognised = 1;
        }
        int q = sass_qspc_before(s, i);
        if (q >= 0) {
            in->role |= ROLE_FALLBACK;
            append(in->note, sizeof in->note, "; ",
                   "shared-memory fallback of a generic atomic (after QSPC)");
            recognised = 1;
        }
        if (is_cas(in)) {
            int b = sass_back_branch(s, i);
            if (b >= 0) {
                s->v[b].role |= ROLE_LOOP;
                if (q < 0) {
                    char t[64];
                    snprintf(t, sizeof t, "CAS loop (back-branch at /*%04lx*/)", s->v[b].addr);
                    append(in->note, sizeof in->note, "; ", t);
                    f->cas_loop++;
                    recognised = 1;
                }
            }
        }
        if (!recognised) {
            f->sass.plain++;
            append(in->note, sizeof in->note, "; ", "one per thread");
        }
        if (has_mod(in, "F16x2") || has_mod(in, "BF16x2"))
            append(in->note, sizeof in->note, "; ", "native packed 16-bit");
    }
}

int inspect_sass(const char *sass, InspectFacts *f)
{
    SassScan s = {0};
    sass_scan(sass ? sass : "", &s);
    int n = -1;
    if (s.n > 0) {
        sass_classify(&s, f);
        f->has_sass = 1;
        n = f->sass.total;
    }
    free(s.v);
    free(s.lab);
    return n;
}

/* ---- disassembler ------------------------------------------------------------ */

static char g_tool[4096];
static pthread_once_t g_tool_once = PTHREAD_ONCE_INIT;

static int tool_at(const char *dir, const char *name)
{
    struct stat st;
    if (!dir || !*dir)
        return 0;
    snprintf(g_tool, sizeof g_tool, "%s/%s", dir, name);
    if (stat(g_tool, &st) == 0 && S_ISREG(st.st_mode) && access(g_tool, X_OK) == 0)
        return 1;
    g_tool[0] = '\0';
    return 0;
}

static void find_tool(void)
{
    const char *env = getenv("KVX_NVDISASM");
    if (env && *env && access(env, X_OK) == 0) {
        snprintf(g_tool, sizeof g_tool, "%s", env);
        return;
    }
    char home[1024] = "", path_cuda[1024] = "", built[1024] = "";
    if (getenv("CUDA_HOME"))
        snprintf(home, sizeof home, "%s/bin", getenv("CUDA_HOME"));
    if (getenv("CUDA_PATH"))
        snprintf(path_cuda, sizeof path_cuda, "%s/bin", getenv("CUDA_PATH"));
#ifdef KVX_CUDA_INCLUDE_DIR
    /* the toolkit kvx was built against: <root>/include -> <root>/bin */
    snprintf(built, sizeof built, "%s/../bin", KVX_CUDA_INCLUDE_DIR);
#endif
    static const char *const NAMES[] = {"nvdisasm", "cuobjdump"};
    for (int t = 0; t < 2; t++) {
        const char *dirs[] = {home, path_cuda, built, "/usr/local/cuda/bin"};
        for (size_t d = 0; d < sizeof dirs / sizeof dirs[0]; d++)
            if (tool_at(dirs[d], NAMES[t]))
                return;
        const char *p = getenv("PATH");
        while (p && *p) {
            size_t n = strcspn(p, ":");
            char dir[1024];
            snprintf(dir, sizeof dir, "%.*s", (int)n, p);
            if (n && tool_at(dir, NAMES[t]))
                return;
            p += n + (p[n] == ':');
        }
    }
}

const char *inspect_find_disassembler(void)
{
    pthread_once(&g_tool_once, find_tool);
    return g_tool[0] ? g_tool : NULL;
}

char *inspect_disassemble(const void *cubin, size_t len, KvxError *err)
{
    const char *tool = inspect_find_disassembler();
    return tool ? inspect_disassemble_with(tool, cubin, len, err) : NULL;
}

char *inspect_disassemble_with(const char *tool, const void *cubin, size_t len, KvxError *err)
{
    const char *tmp = getenv("TMPDIR");
    char dir[1024], bin[1100], errf[1100];
    char *out = NULL, *msg = NULL;
    int pipefd[2] = {-1, -1}, spawned = 0;
    StrBuf sb;
    sb_init(&sb);
    snprintf(dir, sizeof dir, "%s/kvx-inspect-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        kvx_error_set(err, KVX_EIO, NULL, "cannot create a temporary directory %s: %s", dir,
                      strerror(errno));
        return NULL;
    }
    snprintf(bin, sizeof bin, "%s/kernel.cubin", dir);
    snprintf(errf, sizeof errf, "%s/stderr.txt", dir);
    if (file_write_atomic(bin, cubin, len) != 0) {
        kvx_error_set(err, KVX_EIO, NULL, "cannot write %s: %s", bin, strerror(errno));
        goto fail;
    }
    const char *slash = strrchr(tool, '/');
    int cuobjdump = strstr(slash ? slash + 1 : tool, "cuobjdump") != NULL;
    char *argv[] = {(char *)tool, (char *)(cuobjdump ? "-sass" : "-c"), bin, NULL};

    posix_spawn_file_actions_t fa;
    pid_t pid;
    if (pipe(pipefd) != 0) {
        kvx_error_set(err, KVX_EIO, NULL, "pipe: %s", strerror(errno));
        goto fail;
    }
    /* other threads may spawn too: keep our pipe out of their children */
    fcntl(pipefd[0], F_SETFD, FD_CLOEXEC);
    fcntl(pipefd[1], F_SETFD, FD_CLOEXEC);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, errf, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int rc = posix_spawn(&pid, tool, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(pipefd[1]);
    pipefd[1] = -1;
    if (rc != 0) {
        kvx_error_set(err, KVX_EIO, NULL, "cannot run %s: %s", tool, strerror(rc));
        goto fail;
    }
    spawned = 1;
    char buf[65536];
    ssize_t n;
    while ((n = read(pipefd[0], buf, sizeof buf)) != 0) {
        if (n < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        sb_put(&sb, buf, (size_t)n);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    spawned = 0;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        size_t mlen = 0;
        msg = file_read(errf, &mlen);
        if (WIFEXITED(status))
            kvx_error_set(err, KVX_EIO, NULL, "%s failed on the CUBIN (exit status %d)", tool,
                          WEXITSTATUS(status));
        else
            kvx_error_set(err, KVX_EIO, NULL, "%s failed on the CUBIN (signal %d)", tool,
                          WIFSIGNALED(status) ? WTERMSIG(status) : 0);
        if (msg && mlen)
            kvx_error_attach_log(err, msg, mlen);
        goto fail;
    }
    out = sb_take(&sb);
    if (!out)
        out = xstrdup("");
fail:
    if (spawned)
        waitpid(pid, NULL, 0);
    if (pipefd[0] >= 0)
        close(pipefd[0]);
    free(msg);
    sb_free(&sb);
    unlink(bin);
    unlink(errf);
    rmdir(dir);
    return out;
}

int inspect_job(const JitJob *job, InspectFacts *f, KvxError *err)
{
    inspect_facts_init(f);
    if (job->ptx)
        inspect_ptx(job->ptx, f);
    inspect_set_compile(f, job);
    if (!job->cubin || !job->cubin_len)
        return 0;
    KvxError e = {0};
    char *sass = inspect_disassemble(job->cubin, job->cubin_len, &e);
    if (!sass) {
        if (!e.code)
            return 0;           /* no disassembler: PTX facts only */
        if (err && !err->code)
            *err = e;           /* hands the log over */
        else
            kvx_error_clear(&e);
        return -1;
    }
    inspect_sass(sass, f);
    free(sass);
    return 0;
}

/* ---- output ------------------------------------------------------------------ */

/* The tags in a fixed order; verbose adds what each rests on (summary). */
static void tags(const InspectFacts *f, StrBuf *out, int verbose)
{
    size_t start = out->len;
#define TAG(...) do { if (out->len > start) sb_puts(out, ", "); sb_printf(out, __VA_ARGS__); } while (0)
    if (!f->has_sass) {
        TAG("%s", f->has_ptx ? "no SASS" : "not inspected");
        if (f->has_ptx && f->ptx.cas_loop)
            TAG("CAS loop in PTX");
        return;
    }
    const InspectSass *c = &f->sass;
    if (c->total == 0) {
        TAG("no atomics");
        return;
    }
    const char *seq = verbose && f->agg_seq[0] ? f->agg_seq : NULL;
    if (f->warp_aggregated)
        TAG(seq ? "ptxas warp-aggregated: %s" : "warp-aggregated%s", seq ? seq : "");
    else if (f->redux_aggregated)
        TAG(seq ? "REDUX-aggregated: %s" : "REDUX-aggregated%s", seq ? seq : "");
    else if (f->shfl_aggregated)
        TAG(seq ? "shfl-aggregated (full warps): %s" : "shfl-aggregated%s", seq ? seq : "");
    if (f->warp_aggregated && f->redux_aggregated)
        TAG("REDUX-aggregated");
    if ((f->warp_aggregated || f->redux_aggregated) && f->shfl_aggregated)
        TAG("shfl-aggregated");
    if (f->smem_hw_inc)
        TAG("smem HW inc");
    if (f->cas_loop) {
        /* no CAS loop in the PTX: ptxas built it (e.g. a 16-bit add) */
        int by_ptxas = f->has_ptx && f->ptx.cas_loop == 0;
        TAG(by_ptxas ? (verbose ? "CAS loop emulated by ptxas" : "CAS loop (ptxas)") : "CAS loop");
    }
    int aggregated = f->warp_aggregated || f->redux_aggregated || f->shfl_aggregated ||
                     f->smem_hw_inc || f->cas_loop;
    if (c->plain && !aggregated)
        TAG("per-thread");
    else if (c->plain && verbose)
        TAG("%d more per-thread", c->plain);
    if (c->packed_f16x2)
        TAG("native f16x2");
    if (c->packed_bf16x2)
        TAG("native bf16x2");
    if (c->vector)
        TAG("vector");
    if (f->generic_fallback)
        TAG(verbose ? "generic fallback: QSPC + shared-memory path" : "generic fallback");
#undef TAG
}

void inspect_tags(const InspectFacts *f, StrBuf *out) { tags(f, out, 0); }

static void kinds_list(const InspectKind *k, int n, int other, StrBuf *out)
{
    if (n == 0) {
        sb_puts(out, "no atomics");
        return;
    }
    for (int i = 0; i < n; i++)
        sb_printf(out, "%s%d %s", i ? ", " : "", k[i].count, k[i].name);
    if (other)
        sb_printf(out, ", %d more", other);
}

void inspect_summary(const InspectFacts *f, StrBuf *out)
{
    if (f->has_sass) {
        sb_puts(out, "SASS");
        if (f->sass.arch[0])
            sb_printf(out, " %s", f->sass.arch);
        sb_puts(out, ": ");
        kinds_list(f->sass.kinds, f->sass.nkinds, f->sass.kinds_other, out);
        if (f->sass.total) {
            sb_puts(out, " (");
            tags(f, out, 1);
            sb_puts(out, ")");
        }
        sb_puts(out, "; ");
    }
    if (f->has_ptx) {
        sb_puts(out, "PTX: ");
        kinds_list(f->ptx.kinds, f->ptx.nkinds, f->ptx.kinds_other, out);
        if (f->ptx.cas_loop)
            sb_printf(out, " (CAS loop in the PTX)");
    }
    if (!f->has_sass)
        sb_printf(out, "%sno SASS (needs nvdisasm)", f->has_ptx ? "; " : "");
    if (f->regs >= 0)
        sb_printf(out, "; %d regs", f->regs);
    if (f->spill_stores > 0 || f->spill_loads > 0)
        sb_printf(out, ", spills %d B stored / %d B loaded", f->spill_stores, f->spill_loads);
    if (f->smem_static > 0)
        sb_printf(out, ", %d B static smem", f->smem_static);
}

static void json_str(StrBuf *out, const char *s)
{
    sb_putc(out, '"');
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            sb_printf(out, "\\%c", ch);
        else if (ch < 0x20)
            sb_printf(out, "\\u%04x", ch);
        else
            sb_putc(out, (char)ch);
    }
    sb_putc(out, '"');
}

static void json_kinds(StrBuf *out, const InspectKind *k, int n)
{
    sb_puts(out, "\"kinds\":{");
    for (int i = 0; i < n; i++) {
        if (i)
            sb_putc(out, ',');
        json_str(out, k[i].name);
        sb_printf(out, ":%d", k[i].count);
    }
    sb_putc(out, '}');
}

static void json_opt(StrBuf *out, const char *key, int v)
{
    if (v < 0)
        sb_printf(out, ",\"%s\":null", key);
    else
        sb_printf(out, ",\"%s\":%d", key, v);
}

void inspect_to_json(const InspectFacts *f, StrBuf *out)
{
    StrBuf t;
    sb_init(&t);
    tags(f, &t, 0);
    sb_printf(out, "{\"sass_available\":%s,\"arch\":", f->has_sass ? "true" : "false");
    json_str(out, f->sass.arch);
    sb_puts(out, ",\"tags\":");
    json_str(out, sb_str(&t));
    sb_printf(out, ",\"warp_aggregated\":%d,\"redux_aggregated\":%d,\"shfl_aggregated\":%d,"
                   "\"cas_loop\":%d,\"smem_hw_inc\":%d,\"generic_fallback\":%d,\"agg_seq\":",
              f->warp_aggregated, f->redux_aggregated, f->shfl_aggregated, f->cas_loop,
              f->smem_hw_inc, f->generic_fallback);
    json_str(out, f->agg_seq);
    json_opt(out, "regs", f->regs);
    json_opt(out, "spill_stores", f->spill_stores);
    json_opt(out, "spill_loads", f->spill_loads);
    json_opt(out, "smem_static", f->smem_static);
    const InspectPtx *p = &f->ptx;
    if (f->has_ptx) {
        sb_printf(out, ",\"ptx\":{\"atom\":%d,\"red\":%d,\"global\":%d,\"shared\":%d,"
                       "\"cluster\":%d,\"generic\":%d,\"cas\":%d,\"b16\":%d,\"packed\":%d,"
                       "\"vector\":%d,\"b64\":%d,\"scope_cta\":%d,\"scope_cluster\":%d,"
                       "\"scope_sys\":%d,\"cas_loop\":%d,",
                  p->atom, p->red, p->global, p->shared, p->cluster, p->generic, p->cas,
                  p->b16, p->packed, p->vector, p->b64, p->scope_cta, p->scope_cluster,
                  p->scope_sys, p->cas_loop);
        json_kinds(out, p->kinds, p->nkinds);
        sb_printf(out, ",\"kinds_other\":%d}", p->kinds_other);
    } else {
        sb_puts(out, ",\"ptx\":null");
    }
    const InspectSass *c = &f->sass;
    if (f->has_sass) {
        sb_printf(out, ",\"sass\":{\"total\":%d,\"ATOM\":%d,\"ATOMG\":%d,\"ATOMS\":%d,"
                       "\"RED\":%d,\"REDG\":%d,\"REDAS\":%d,\"smem_inc\":%d,\"cas\":%d,"
                       "\"b16\":%d,\"packed_f16x2\":%d,\"packed_bf16x2\":%d,\"vector\":%d,"
                       "\"b64\":%d,\"scope_sys\":%d,\"scope_cta\":%d,\"plain\":%d,",
                  c->total, c->atom, c->atomg, c->atoms, c->red, c->redg, c->redas,
                  c->smem_inc, c->cas, c->b16, c->packed_f16x2, c->packed_bf16x2, c->vector,
                  c->b64, c->scope_sys, c->scope_cta, c->plain);
        json_kinds(out, c->kinds, c->nkinds);
        sb_printf(out, ",\"kinds_other\":%d}", c->kinds_other);
    } else {
        sb_puts(out, ",\"sass\":null");
    }
    sb_putc(out, '}');
    sb_free(&t);
}

/* Gutter and note per line of the listing, from the same scans the facts use. */
typedef struct LineMark {
    char gutter;                /* '>' atomic, '*' sequence/loop/fallback, 0 none */
    const char *note;
} LineMark;

void inspect_mark(const char *listing, int is_sass, StrBuf *out)
{
    const char *text = listing ? listing : "";
    int nlines = 1;
    for (const char *c = text; *c; c++)
        nlines += *c == '\n';
    LineMark *m = xcalloc((size_t)nlines, sizeof *m);
    SassScan s = {0};
    PtxScan ps = {0};
    char (*ptx_notes)[96] = NULL;
    if (is_sass) {
        sass_scan(text, &s);
        sass_classify(&s, NULL);
        for (int i = 0; i < s.n; i++) {
            const Insn *in = &s.v[i];
            if (in->role & ROLE_ATOMIC) {
                m[in->line].gutter = '>';
                m[in->line].note = in->note;
            } else if (in->role) {
                m[in->line].gutter = '*';
            }
        }
    } else {
        InspectPtx p = {0};
        ptx_scan(text, &p, &ps);
        ptx_notes = xcalloc((size_t)ps.n + 1, sizeof *ptx_notes);
        for (int i = 0; i < ps.n; i++) {
            const PtxLine *l = &ps.v[i];
            if (!l->atomic)
                continue;
            m[l->line].gutter = '>';
            if (l->loop_to >= 0) {
                const PtxLine *b = &ps.v[l->loop_to];
                snprintf(ptx_notes[i], sizeof ptx_notes[i], "CAS loop (bra %s)", b->name);
                m[l->line].note = ptx_notes[i];
                m[b->line].gutter = '*';
            }
        }
    }
    const char *cur = text, *line;
    size_t len;
    for (int ln = 0; next_line(&cur, &line, &len); ln++) {
        sb_puts(out, m[ln].gutter == '>' ? ">> " : m[ln].gutter == '*' ? " * " : "   ");
        sb_put(out, line, len);
        if (m[ln].note && m[ln].note[0])
            sb_printf(out, "   // kvx: %s", m[ln].note);
        sb_putc(out, '\n');
    }
    free(ptx_notes);
    free(ps.v);
    free(s.v);
    free(s.lab);
    free(m);
}

static void md_cell(StrBuf *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            sb_putc(out, '\\');
        sb_putc(out, *s == '\n' ? ' ' : *s);
    }
}

void inspect_table(const char *const *labels, int nvar, const char *const *archs, int narch,
                   const InspectFacts *facts, StrBuf *out)
{
    sb_puts(out, "| variant |");
    for (int a = 0; a < narch; a++) {
        sb_putc(out, ' ');
        md_cell(out, archs[a]);
        sb_puts(out, " |");
    }
    sb_puts(out, "\n|---|");
    for (int a = 0; a < narch; a++)
        sb_puts(out, "---|");
    sb_putc(out, '\n');
    StrBuf t;
    sb_init(&t);
    for (int v = 0; v < nvar; v++) {
        sb_puts(out, "| ");
        md_cell(out, labels[v]);
        sb_puts(out, " |");
        for (int a = 0; a < narch; a++) {
            sb_reset(&t);
            tags(&facts[(size_t)v * (size_t)narch + (size_t)a], &t, 0);
            sb_putc(out, ' ');
            md_cell(out, sb_str(&t));
            sb_puts(out, " |");
        }
        sb_putc(out, '\n');
    }
    sb_free(&t);
}
