/* results_failures: `kvx table --failures`: the selected cases (and --where's)
 * whose status is not ok, one row each with the axes that tell them apart, the
 * status and the stored detail (the error, or the first differing elements of
 * a mismatch), so that nobody parses an export to find out what failed.
 *
 * Rows come in the cases' stored order; the axes are those with a value on
 * some listed case.  No failure is no error: 1 with a message in err, which
 * the command prints and exits 0 on (a clean run is the good news). */
#include "results_core.h"
#include "results_rows.h"

#include <stdlib.h>
#include <string.h>

static int is_failure(const Rec *r)
{
    return r->match && strcmp(r->status, "ok") != 0;
}

/* The axes with a value on some failed case, into axes; their count. */
static int failure_axes(const CaseSet *cs, int *axes)
{
    int n = 0;
    for (int a = 0; a < cs->naxes; a++)
        for (int i = 0; i < cs->nrecs; i++)
            if (is_failure(&cs->recs[i]) && cs->recs[i].ax[a] >= 0) {
                axes[n++] = a;
                break;
            }
    return n;
}

static const char *axis_text(const CaseSet *cs, const Rec *r, int a)
{
    return r->ax[a] >= 0 ? cs->axes[a].vals[r->ax[a]].text : "";
}

/* The failed cases as one table: their axes, status and detail. */
static void write_rows(const CaseSet *cs, const int *axes, int n, ResultsFormat f, FILE *out)
{
    const char **cells = mem_alloc(sizeof *cells * (size_t)(n + 2));
    for (int j = 0; j < n; j++)
        cells[j] = cs->axes[axes[j]].name;
    cells[n] = "status", cells[n + 1] = "detail";
    ResultsRows *t = results_rows_open(out, f, cells, n + 2);
    for (int i = 0; i < cs->nrecs; i++) {
        const Rec *r = &cs->recs[i];
        if (!is_failure(r))
            continue;
        for (int j = 0; j < n; j++)
            cells[j] = r->ax[axes[j]] >= 0 ? axis_text(cs, r, axes[j]) : NULL;
        cells[n] = r->status, cells[n + 1] = r->rawtext;
        results_rows_add(t, cells);
    }
    results_rows_close(t);
    free(cells);
}

int results_failures(Store *db, const TableOpts *o, FILE *out, KvxError *err)
{
    if (o->nrows || o->ncols || o->ratio || o->best || o->value) {
        kvx_error_set(err, KVX_EINPUT, NULL, "--failures takes no --rows, --cols, --value, --ratio,"
                      " --speedup or --best");
        return -1;
    }
    TableOpts lo = *o;
    lo.value = results_detail_value;
    CaseSet cs;
    int rc = -1;
    if (results_caseset_load(db, &o->sel, &lo, NULL, 0, &cs, err))
        goto fail;
    int nfailed = 0, nmatch = 0;
    for (int i = 0; i < cs.nrecs; i++)
        nmatch += cs.recs[i].match, nfailed += is_failure(&cs.recs[i]);
    if (!nfailed) {
        kvx_error_set(err, KVX_EINPUT, NULL, "no failed case among the %d stored case%s of spec '%s'%s%s",
                      nmatch, nmatch == 1 ? "" : "s", cs.sel.spec, o->where && *o->where ? " matching --where " : "",
                      o->where && *o->where ? o->where : "");
        if (!nmatch && cs.where_misses)
            kvx_error_attach_log(err, cs.where_misses, strlen(cs.where_misses));
        rc = 1;
        goto fail;
    }
    int axes[RESULTS_MAX_AXES];
    int n = failure_axes(&cs, axes);
    write_rows(&cs, axes, n, o->format, out);
    rc = 0;
fail:
    results_caseset_free(&cs);
    return rc;
}
