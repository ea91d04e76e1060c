/* inspect_internal: what the inspect_*.c files share; nothing outside
 * compile/inspect*.c includes it.
 *
 *   inspect_ptx.c     PTX: atom/red counted by kind, CAS loops in the source
 *   inspect_sass.c    SASS: parsing an nvdisasm/cuobjdump listing, counting and
 *                     classifying its atomics (the heuristics of inspect.h)
 *   inspect_disasm.c  finding and running nvdisasm/cuobjdump; inspect_job
 *   inspect_mem.c     loads and stores (LDG/STG/LDS/STS, ld/st.global/.shared)
 *                     by kind and width
 *   inspect.c         the facts and their outputs: tags, summary, JSON, the
 *                     marked listing, the variant x arch table
 *
 * Both scans read text line by line into a small record array and never modify
 * the input; inspect_mark re-reads the same arrays to put a gutter on the
 * listing, so what --show marks is exactly what was counted. */
#ifndef KVX_INSPECT_INTERNAL_H
#define KVX_INSPECT_INTERNAL_H

#include "inspect.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* ---- text helpers (the static inline ones: each file gets its own copy) ---- */

/* The next line of text at *p: its start and length (no newline); *p moves past
 * it.  Returns 0 at the end. */
static inline int next_line(const char **p, const char **line, size_t *len)
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

/* s moved past blanks (space, tab, CR), not beyond end. */
static inline const char *skip_ws(const char *s, const char *end)
{
    while (s < end && (*s == ' ' || *s == '\t' || *s == '\r'))
        s++;
    return s;
}

/* Copy the token at s (up to whitespace, ';', ',' or end) into out[cap]. */
static inline const char *take_token(const char *s, const char *end, char *out, size_t cap)
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

/* 1 when tok is one of the NULL-terminated set, else 0. */
static inline int in_set(const char *tok, const char *const *set)
{
    for (; *set; set++)
        if (strcmp(tok, *set) == 0)
            return 1;
    return 0;
}

/* Count one more atomic of kind name: into its entry, a new entry, or
 * *other once INSPECT_MAX_KINDS distinct kinds are held.  Names are cut to
 * fit InspectKind.name.  Out of line in inspect.c: inlined into a single
 * caller, GCC's -Wformat-truncation flags that intended cut. */
void inspect_kinds_add(InspectKind *kinds, int *nkinds, int *other, const char *name);

/* Append s to the string dst[cap], after sep unless dst is empty; truncates. */
static inline void append(char *dst, size_t cap, const char *sep, const char *s)
{
    size_t n = strlen(dst);
    snprintf(dst + n, cap - n, "%s%s", n ? sep : "", s);
}

/* ---- PTX scan (inspect_ptx.c) ---------------------------------------------- */

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

/* Scan PTX text: count its atom/red into *p (added to what is there) and record
 * atomics, labels and branches in s, with loop_to set on each CAS inside a
 * loop, and each atomic as a site of f (NULL: none).  s starts zeroed; s->v is
 * malloc'd and the caller frees it. */
void inspect_ptx_scan(const char *ptx, InspectPtx *p, PtxScan *s, InspectFacts *f);

/* ---- SASS scan (inspect_sass.c) -------------------------------------------- */

/* Insn.role bits: what inspect_mark puts in the gutter. */
enum { ROLE_ATOMIC = 1, ROLE_SEQ = 2, ROLE_LOOP = 4, ROLE_FALLBACK = 8 };

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

/* Read a SASS listing into s: instructions, labels, function boundaries and
 * resolved branch targets.  s starts zeroed; s->v and s->lab are malloc'd and
 * the caller frees both. */
void inspect_sass_scan(const char *text, SassScan *s);

/* Classify every atomic of a scanned listing into f (f->sass and the
 * classification counts are reset first; f may be NULL to get only the marks)
 * and leave roles and notes on s's instructions for inspect_mark. */
void inspect_sass_classify(SassScan *s, InspectFacts *f);

/* ---- loads and stores (inspect_mem.c) ------------------------------------- */

/* The loads and stores of PTX text, or of a scanned SASS listing, into *m
 * (reset first; m->source says which).  inspect_ptx and inspect_sass call
 * them in that order: the SASS's replace the PTX's. */
void inspect_mem_ptx(const char *ptx, InspectMem *m);
void inspect_mem_sass(const SassScan *s, InspectMem *m);
/* ,"mem":{...} of inspect_to_json (null without facts). */
void inspect_mem_json(const InspectFacts *f, StrBuf *out);

#endif
