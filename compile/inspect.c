/* inspect: the facts of inspection (inspect.h) and what is made of them:
 * tags, the one-line summary, the stored JSON, the listing marked with a
 * gutter, and the variant x arch table.  The analyses themselves live in
 * inspect_ptx.c and inspect_sass.c, the disassembler in inspect_disasm.c
 * (inspect_internal.h lists the files).
 *
 * inspect_mark re-reads the same scan records the facts come from, so what
 * --show marks is exactly what was counted. */
#include "inspect_internal.h"

#include "core/json.h"

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

void inspect_kinds_add(InspectKind *kinds, int *nkinds, int *other, const char *name)
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

/* ---- output ------------------------------------------------------------------ */

/* What the source does at the atomics ptxas left alone: "per-thread", or
 * "one per warp (source)" when the source aggregated them itself (the first
 * such global site says; without PTX, per-thread). */
static const char *plain_label(const InspectFacts *f)
{
    for (int k = 0; k < f->nsites; k++) {
        const InspectSite *st = &f->sites[k];
        if (strcmp(st->space, "global") || (strcmp(st->ptxas, "none") && strcmp(st->ptxas, "generic-address")))
            continue;
        if (!strcmp(st->source, "one per warp"))
            return "one per warp (source)";
        if (!strcmp(st->source, "one per block"))
            return "one per block (source)";
        return "per-thread";
    }
    return "per-thread";
}

void inspect_sites(const InspectFacts *f, StrBuf *out)
{
    for (int k = 0; k < f->nsites; k++) {
        const InspectSite *st = &f->sites[k];
        sb_printf(out, "%s %s: source %s; ptxas %s", st->space, st->sass[0] ? st->sass : "(no SASS)",
                  st->source, st->ptxas[0] ? st->ptxas : "unknown");
        if (st->ptxas[0] && strcmp(st->space, "global") == 0)
            sb_printf(out, "; %d global atomic%s per warp", st->per_warp, st->per_warp == 1 ? "" : "s");
        sb_putc(out, '\n');
    }
    if (f->sites_more)
        sb_printf(out, "%d more site%s (over %d, not listed)\n", f->sites_more,
                  f->sites_more == 1 ? "" : "s", INSPECT_MAX_SITES);
}

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
        TAG("%s", plain_label(f));
    else if (c->plain && verbose)
        TAG("%d more: %s", c->plain, plain_label(f));
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

static void json_kinds(StrBuf *out, const InspectKind *k, int n)
{
    sb_puts(out, "\"kinds\":{");
    for (int i = 0; i < n; i++) {
        if (i)
            sb_putc(out, ',');
        json_put_str(out, k[i].name, JSON_BYTES);
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

/* "sites": [...]: each atomic site's space, source line, path and SASS. */
static void json_sites(const InspectFacts *f, StrBuf *out)
{
    sb_puts(out, ",\"sites\":[");
    for (int k = 0; k < f->nsites; k++) {
        const InspectSite *st = &f->sites[k];
        sb_puts(out, k ? ",{\"space\":" : "{\"space\":");
        json_put_str(out, st->space, JSON_BYTES);
        sb_puts(out, ",\"source\":");
        json_put_str(out, st->source, JSON_BYTES);
        sb_puts(out, ",\"ptxas\":");
        json_put_str(out, st->ptxas, JSON_BYTES);
        sb_puts(out, ",\"sass\":");
        json_put_str(out, st->sass, JSON_BYTES);
        sb_printf(out, ",\"per_warp\":%d}", st->per_warp);
    }
    sb_putc(out, ']');
    sb_printf(out, ",\"sites_more\":%d", f->sites_more);
}

/* "ptx": the PTX counts, or null without PTX facts. */
static void json_ptx(const InspectFacts *f, StrBuf *out)
{
    const InspectPtx *p = &f->ptx;
    if (!f->has_ptx) {
        sb_puts(out, ",\"ptx\":null");
        return;
    }
    sb_printf(out, ",\"ptx\":{\"atom\":%d,\"red\":%d,\"global\":%d,\"shared\":%d,"
                   "\"cluster\":%d,\"generic\":%d,\"cas\":%d,\"b16\":%d,\"packed\":%d,"
                   "\"vector\":%d,\"b64\":%d,\"scope_cta\":%d,\"scope_cluster\":%d,"
                   "\"scope_sys\":%d,\"cas_loop\":%d,",
              p->atom, p->red, p->global, p->shared, p->cluster, p->generic, p->cas,
              p->b16, p->packed, p->vector, p->b64, p->scope_cta, p->scope_cluster,
              p->scope_sys, p->cas_loop);
    json_kinds(out, p->kinds, p->nkinds);
    sb_printf(out, ",\"kinds_other\":%d}", p->kinds_other);
}

/* "sass": the SASS counts, or null without a disassembly. */
static void json_sass(const InspectFacts *f, StrBuf *out)
{
    const InspectSass *c = &f->sass;
    if (!f->has_sass) {
        sb_puts(out, ",\"sass\":null");
        return;
    }
    sb_printf(out, ",\"sass\":{\"total\":%d,\"ATOM\":%d,\"ATOMG\":%d,\"ATOMS\":%d,"
                   "\"RED\":%d,\"REDG\":%d,\"REDAS\":%d,\"smem_inc\":%d,\"cas\":%d,"
                   "\"b16\":%d,\"packed_f16x2\":%d,\"packed_bf16x2\":%d,\"vector\":%d,"
                   "\"b64\":%d,\"scope_sys\":%d,\"scope_cta\":%d,\"plain\":%d,",
              c->total, c->atom, c->atomg, c->atoms, c->red, c->redg, c->redas,
              c->smem_inc, c->cas, c->b16, c->packed_f16x2, c->packed_bf16x2, c->vector,
              c->b64, c->scope_sys, c->scope_cta, c->plain);
    json_kinds(out, c->kinds, c->nkinds);
    sb_printf(out, ",\"kinds_other\":%d}", c->kinds_other);
}

void inspect_to_json(const InspectFacts *f, StrBuf *out)
{
    StrBuf t;
    sb_init(&t);
    tags(f, &t, 0);
    sb_printf(out, "{\"sass_available\":%s,\"arch\":", f->has_sass ? "true" : "false");
    json_put_str(out, f->sass.arch, JSON_BYTES);
    sb_puts(out, ",\"disassembler\":");
    json_put_str(out, f->tool, JSON_BYTES);
    sb_puts(out, ",\"tags\":");
    json_put_str(out, sb_str(&t), JSON_BYTES);
    sb_printf(out, ",\"warp_aggregated\":%d,\"redux_aggregated\":%d,\"shfl_aggregated\":%d,"
                   "\"cas_loop\":%d,\"smem_hw_inc\":%d,\"generic_fallback\":%d,\"agg_seq\":",
              f->warp_aggregated, f->redux_aggregated, f->shfl_aggregated, f->cas_loop,
              f->smem_hw_inc, f->generic_fallback);
    json_put_str(out, f->agg_seq, JSON_BYTES);
    json_sites(f, out);
    json_opt(out, "regs", f->regs);
    json_opt(out, "spill_stores", f->spill_stores);
    json_opt(out, "spill_loads", f->spill_loads);
    json_opt(out, "smem_static", f->smem_static);
    json_ptx(f, out);
    json_sass(f, out);
    inspect_mem_json(f, out);
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
    LineMark *m = mem_calloc((size_t)nlines, sizeof *m);
    SassScan s = {0};
    PtxScan ps = {0};
    char (*ptx_notes)[96] = NULL;
    if (is_sass) {
        inspect_sass_scan(text, &s);
        inspect_sass_classify(&s, NULL);
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
        inspect_ptx_scan(text, &p, &ps, NULL);
        ptx_notes = mem_calloc((size_t)ps.n + 1, sizeof *ptx_notes);
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
