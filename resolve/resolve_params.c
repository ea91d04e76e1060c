/* resolve_params: a kernel's parameter list, read from its PTX (widths) and
 * from its source's __global__ declaration (count, which are pointers, the
 * scalars' C types, comments skipped), for resolve.c's argument checks. */
#include "resolve_internal.h"

#include <ctype.h>
#include <string.h>

static const char *skip_space(const char *q)
{
    while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')
        q++;
    return q;
}

/* Past the comment at p, or p when none starts there: a `,` or `>` in a
 * comment inside a parameter list is prose, not a separator. */
static const char *skip_comment(const char *p)
{
    if (p[0] == '/' && p[1] == '/') {
        const char *e = strchr(p, '\n');
        return e ? e : p + strlen(p);
    }
    if (p[0] == '/' && p[1] == '*') {
        const char *e = strstr(p + 2, "*/");
        return e ? e + 2 : p + strlen(p);
    }
    return p;
}

/* The C scalar types kvx reads, by their words in any order ("long unsigned
 * int"); the device's long is 64 bits, as on every 64-bit host CUDA supports. */
static const char *const type_words[] = {"unsigned", "signed", "char", "short", "int", "long", "float",
                                         "double", "bool", NULL};
static const struct {
    const char *name;
    int size, is_signed;
    const char *half;   /* the element type of a 16-bit float */
} type_names[] = {
    {"int8_t", 1, 1, NULL}, {"uint8_t", 1, 0, NULL}, {"int16_t", 2, 1, NULL}, {"uint16_t", 2, 0, NULL},
    {"int32_t", 4, 1, NULL}, {"uint32_t", 4, 0, NULL}, {"int64_t", 8, 1, NULL}, {"uint64_t", 8, 0, NULL},
    {"size_t", 8, 0, NULL}, {"ptrdiff_t", 8, 1, NULL}, {"__half", 2, 1, "f16"}, {"half", 2, 1, "f16"},
    {"__nv_bfloat16", 2, 1, "bf16"}, {"nv_bfloat16", 2, 1, "bf16"},
};

static int word_index(const char *w, size_t n)
{
    for (int i = 0; type_words[i]; i++)
        if (strlen(type_words[i]) == n && !strncmp(type_words[i], w, n))
            return i;
    return -1;
}

/* t from the words of a type, the name already dropped: one of type_names,
 * or type_words in any order.  Unknown otherwise. */
static void classify(const char *const *w, const size_t *wl, int nw, ParamType *t)
{
    enum { U, S, CHAR, SHORT, INT, LONG, FLOAT, DOUBLE, BOOL, NWORDS };
    for (size_t i = 0; nw == 1 && i < sizeof type_names / sizeof type_names[0]; i++)
        if (strlen(type_names[i].name) == wl[0] && !strncmp(type_names[i].name, w[0], wl[0])) {
            const char *h = type_names[i].half;
            *t = (ParamType){.known = 1, .size = type_names[i].size, .is_signed = type_names[i].is_signed,
                             .is_float = h != NULL, .half = h ? elem_type_find(h) : NULL};
            return;
        }
    int count[NWORDS] = {0};
    for (int i = 0; i < nw; i++) {
        int k = word_index(w[i], wl[i]);
        if (k < 0)
            return;
        count[k]++;
    }
    int ints = count[U] + count[S] + count[CHAR] + count[SHORT] + count[INT] + count[LONG];
    int sized = count[CHAR] + count[SHORT] + (count[LONG] > 0);
    if (nw == 1 && count[FLOAT])
        *t = (ParamType){.known = 1, .is_float = 1, .size = 4};
    else if (nw == 1 && count[DOUBLE])
        *t = (ParamType){.known = 1, .is_float = 1, .size = 8};
    else if (nw == 1 && count[BOOL])
        *t = (ParamType){.known = 1, .size = 1, .is_bool = 1};
    else if (nw > 0 && ints == nw && sized <= 1 && count[LONG] <= 2 && count[INT] <= 1 &&
             count[U] + count[S] <= 1)
        *t = (ParamType){.known = 1, .is_signed = !count[U], .size = count[CHAR] ? 1 : count[SHORT] ? 2 :
                         count[LONG] ? 8 : 4};
}

/* The type of one parameter declaration, text b..e: its words less the
 * qualifiers and the parameter's name.  Unknown for pointers, references,
 * arrays, templates and names kvx does not know. */
static void param_type(const char *b, const char *e, ParamType *t)
{
    static const char *const quals[] = {"const", "volatile", "__restrict__", "__restrict", "restrict",
                                        "register", "__grid_constant__", NULL};
    memset(t, 0, sizeof *t);
    const char *w[8];
    size_t wl[8];
    int nw = 0;
    for (const char *q = b; q < e; q++) {
        const char *c = skip_comment(q);
        if (c != q) {
            q = c - 1;
            continue;
        }
        if (strchr("*&[(<=", *q))
            return;
        if (!(isalnum((unsigned char)*q) || *q == '_'))
            continue;
        size_t len = 0;
        while (q + len < e && (isalnum((unsigned char)q[len]) || q[len] == '_'))
            len++;
        int is_qual = 0;
        for (int i = 0; quals[i]; i++)
            is_qual |= strlen(quals[i]) == len && !strncmp(quals[i], q, len);
        if (!is_qual && nw == 8)
            return;
        if (!is_qual) {
            w[nw] = q;
            wl[nw++] = len;
        }
        q += len - 1;
    }
    if (nw >= 2 && word_index(w[nw - 1], wl[nw - 1]) < 0)
        nw--;   /* the parameter's name */
    classify(w, wl, nw, t);
    b = skip_space(b);
    while (e > b && strchr(" \t\n\r", e[-1]))
        e--;
    snprintf(t->text, sizeof t->text, "%.*s", (int)(e - b), b);
}

/* The parameter list of `name(` in a __global__ declaration of src: count,
 * which are pointers, and the scalars' C types.  -1 when it is not found (it
 * may hide behind a macro). */
static int source_params(const char *src, const char *name, Params *ps)
{
    size_t n = strlen(name);
    for (const char *q = strstr(src, name); q; q = strstr(q + 1, name)) {
        if ((q > src && (isalnum((unsigned char)q[-1]) || q[-1] == '_')) || *skip_space(q + n) != '(')
            continue;
        const char *decl = q;
        while (decl > src && decl[-1] != ';' && decl[-1] != '}')
            decl--;
        const char *g = strstr(decl, "__global__");
        if (!g || g > q)
            continue;
        const char *p = skip_space(q + n) + 1, *seg = p;
        int depth = 0, ptr = 0, any = 0;
        ps->n = 0;
        for (; *p && !(depth == 0 && *p == ')'); p++) {
            const char *c = skip_comment(p);
            if (c != p) {
                p = c - 1;
                continue;
            }
            if (*p == '(' || *p == '<' || *p == '[')
                depth++;
            else if (*p == ')' || *p == '>' || *p == ']')
                depth--;
            ptr |= *p == '*' || *p == '[';
            any |= !(*p == ' ' || *p == '\t' || *p == '\n');
            if (depth == 0 && *p == ',') {
                if (ps->n < CASE_MAX_ARGS) {
                    ps->is_ptr[ps->n] = ptr;
                    param_type(seg, p, &ps->ct[ps->n]);
                }
                ps->n++;
                ptr = any = 0;
                seg = p + 1;
            }
        }
        if (any || ps->n > 0) {
            if (ps->n < CASE_MAX_ARGS) {
                ps->is_ptr[ps->n] = ptr;
                param_type(seg, p, &ps->ct[ps->n]);
            }
            ps->n++;
        }
        if (ps->n == 1 && !any)
            ps->n = 0; /* f() */
        return 0;
    }
    return -1;
}

int resolve_kernel_params(const ResolveKernel *k, const SrcPos *at, Params *ps, KvxError *err)
{
    memset(ps, 0, sizeof *ps);
    if (k->ptx) {
        ps->n = jit_ptx_params(k->ptx, k->name, ps->p, CASE_MAX_ARGS);
        if (ps->n < 0) {
            kvx_error_set(err, KVX_EINPUT, at, "the PTX has no entry point '%s' (is it extern \"C\"?)",
                          k->name);
            return -1;
        }
        ps->known_widths = 1;
        for (int i = 0; i < ps->n && i < CASE_MAX_ARGS; i++)
            ps->is_ptr[i] = ps->p[i].size == 8 && !ps->p[i].is_float;
        /* The PTX has widths but no signedness: the source's C types, where
         * they can be read, say which values a parameter holds. */
        Params src = {0};
        if (k->source && source_params(k->source, k->name, &src) == 0 && src.n == ps->n)
            memcpy(ps->ct, src.ct, sizeof ps->ct);
        return 0;
    }
    if (source_params(k->source, k->name, ps) < 0) {
        kvx_error_set(err, KVX_EINPUT, at, "the source has no __global__ function '%s' (expected an "
                      "extern \"C\" __global__ entry point of that name)", k->name);
        return -1;
    }
    return 0;
}
