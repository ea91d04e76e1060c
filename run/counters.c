/* counters: the counter pass (counters.h). */
#include "counters.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define X(name, metric, doc) #name,
const char *const counter_names[COUNTER_COUNT] = {COUNTERS(X)};
#undef X
#define X(name, metric, doc) metric,
const char *const counter_metrics[COUNTER_COUNT] = {COUNTERS(X)};
#undef X

/* ---- the metric list -------------------------------------------------------------- */

static int list_add(CounterList *l, const char *name, size_t len, char *why, size_t whylen)
{
    for (int i = 0; i < l->n; i++)
        if (strlen(l->name[i]) == len && !strncmp(l->name[i], name, len))
            return 0;
    if (l->n == COUNTERS_MAX) {
        snprintf(why, whylen, "more than %d metrics", COUNTERS_MAX);
        return -1;
    }
    snprintf(l->name[l->n++], COUNTER_NAME_MAX, "%.*s", (int)len, name);
    return 0;
}

int counters_list_parse(const char *text, CounterList *l, char *why, size_t whylen)
{
    l->n = 0;
    for (const char *p = text;; p++) {
        size_t len = strcspn(p, ",");
        /* ncu's metric names: letters, digits, _ and . (dram__bytes_read.sum) */
        size_t ok = strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.");
        if (len == 0 || ok < len || len >= COUNTER_NAME_MAX) {
            snprintf(why, whylen, "'%s' (expected default, or ncu metric names such as "
                     "dram__bytes_read.sum, comma-separated)", text);
            return -1;
        }
        int rc = 0;
        if (len == 7 && !strncmp(p, "default", 7))
            for (int k = 0; k < COUNTER_COUNT && rc == 0; k++)
                rc = list_add(l, counter_metrics[k], strlen(counter_metrics[k]), why, whylen);
        else
            rc = list_add(l, p, len, why, whylen);
        if (rc)
            return -1;
        p += len;
        if (!*p)
            return 0;
    }
}

void counters_list_join(const CounterList *l, StrBuf *b)
{
    for (int i = 0; i < l->n; i++)
        sb_printf(b, "%s%s", i ? "," : "", l->name[i]);
}

int counters_fixed(const char *metric)
{
    for (int k = 0; k < COUNTER_COUNT; k++)
        if (!strcmp(counter_metrics[k], metric))
            return k;
    return -1;
}

/* ---- finding ncu -------------------------------------------------------------- */

static char g_ncu[2048];
static pthread_once_t g_ncu_once = PTHREAD_ONCE_INIT;

static int exe_at(const char *dir, const char *name)
{
    if (path_exe_at(dir, name, g_ncu, sizeof g_ncu))
        return 1;
    g_ncu[0] = '\0';
    return 0;
}

static void find_ncu(void)
{
    const char *env = getenv("KVX_NCU");
    if (env && *env && access(env, X_OK) == 0) {
        snprintf(g_ncu, sizeof g_ncu, "%s", env);
        return;
    }
    const char *home = getenv("CUDA_HOME");
    char bin[1024];
    snprintf(bin, sizeof bin, "%s/bin", home && *home ? home : "/usr/local/cuda");
    if (exe_at(bin, "ncu") || exe_at("/usr/local/cuda/bin", "ncu"))
        return;
    if (!path_search("ncu", g_ncu, sizeof g_ncu))
        g_ncu[0] = '\0';
}

const char *counters_find_ncu(void)
{
    pthread_once(&g_ncu_once, find_ncu);
    return g_ncu[0] ? g_ncu : NULL;
}

/* ---- ncu's CSV ---------------------------------------------------------------- */

#define CSV_MAX_FIELDS 256

/* Split one CSV line in place: fields unquoted ("" inside quotes is one ").
 * The field count. */
static int csv_split(char *line, char **f, int max)
{
    int n = 0;
    char *p = line;
    while (*p && n < max) {
        char *out = p;
        f[n++] = out;
        if (*p == '"') {
            p++;
            while (*p && !(*p == '"' && p[1] != '"')) {
                if (*p == '"')
                    p++;
                *out++ = *p++;
            }
            if (*p == '"')
                p++;
        } else {
            while (*p && *p != ',' && *p != '\n' && *p != '\r')
                *out++ = *p++;
        }
        char end = *p;
        *out = '\0';
        if (end != ',')
            break;
        p++;
    }
    return n;
}

/* A number as ncu prints it ("1,024", "n/a"): NaN when it is none. */
static double csv_number(const char *s)
{
    char buf[64];
    size_t k = 0;
    for (; *s && k + 1 < sizeof buf; s++)
        if (*s != ',')
            buf[k++] = *s;
    buf[k] = '\0';
    char *end;
    double v = strtod(buf, &end);
    return end == buf || *end ? NAN : v;
}

typedef struct CsvCols {
    int kernel, metric[COUNTERS_MAX];
} CsvCols;

static int header_cols(char **f, int nf, const CounterList *l, CsvCols *c)
{
    c->kernel = -1;
    for (int k = 0; k < l->n; k++)
        c->metric[k] = -1;
    for (int i = 0; i < nf; i++) {
        if (!strcmp(f[i], "Kernel Name"))
            c->kernel = i;
        for (int k = 0; k < l->n; k++)
            if (!strcmp(f[i], l->name[k]))
                c->metric[k] = i;
    }
    return c->kernel >= 0 ? 0 : -1;
}

/* Row values into case row's counters (l's metrics): the first kernel's set
 * them, each later kernel of the case adds its own (a case's counters are its
 * sequence's). */
static void row_values(char **f, int nf, const CsvCols *cols, const CounterList *l, int sub, double *vals)
{
    for (int m = 0; m < l->n; m++) {
        double v = cols->metric[m] >= 0 && cols->metric[m] < nf ? csv_number(f[cols->metric[m]]) : NAN;
        vals[m] = sub ? vals[m] + v : v;
    }
}

int counters_parse(char *text, const CaseDesc *cases, int n, const CounterList *l, double *vals,
                   KvxError *err)
{
    CsvCols cols;
    int have_header = 0, row = 0, sub = 0, nrow = 0;   /* case, its kernel, ncu's data row */
    char *f[CSV_MAX_FIELDS];
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] != '"')
            continue;               /* ==PROF== lines and the like */
        int nf = csv_split(line, f, CSV_MAX_FIELDS);
        if (!have_header) {
            have_header = header_cols(f, nf, l, &cols) == 0;
            continue;
        }
        if (cols.kernel >= nf || isnan(csv_number(f[0])))
            continue;               /* the units row */
        nrow++;
        CaseKernel k;
        if (row < n)
            case_kernel_at(&cases[row], sub, &k);
        /* kvx's own kernels (kvx_fill making the inputs on the device, the
         * compare and sort kernels) run in the pass too: not the case's. */
        if (!strncmp(f[cols.kernel], "kvx_", 4) && (row >= n || strncmp(k.kernel, "kvx_", 4)))
            continue;
        if (row >= n || strncmp(f[cols.kernel], k.kernel, strlen(k.kernel)) != 0) {
            kvx_error_set(err, KVX_EFAIL, NULL, "ncu row %d is kernel '%s' (expected '%s' of case "
                          "%d of %d): counters not stored", nrow, f[cols.kernel],
                          row < n ? k.kernel : "none", row + 1, n);
            return -1;
        }
        row_values(f, nf, &cols, l, sub, vals + (size_t)row * (size_t)l->n);
        if (++sub > cases[row].nnext)
            row++, sub = 0;
    }
    if (!have_header) {
        kvx_error_set(err, KVX_EFAIL, NULL, "ncu wrote no CSV table");
        return -1;
    }
    return row;
}

/* ---- the pass ------------------------------------------------------------------ */

static int write_cases(const char *path, const CaseDesc *cases, int n, KvxError *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int rc = fd < 0 ? -1 : 0;
    for (int i = 0; rc == 0 && i < n; i++)
        rc = case_write(fd, &cases[i]);
    if (fd >= 0 && close(fd) != 0)
        rc = -1;
    if (rc)
        kvx_error_set(err, KVX_EIO, NULL, "cannot write %s: %s", path, strerror(errno));
    return rc;
}

/* Run argv (argv[0] the program), stdout to /dev/null, stderr to errlog.  The
 * exit status, or -1 with err when it could not be started. */
static int spawn_wait(char **argv, const char *errlog, KvxError *err)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, errlog, O_WRONLY | O_CREAT | O_APPEND, 0600);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc) {
        kvx_error_set(err, KVX_EIO, NULL, "cannot run %s: %s", argv[0], strerror(rc));
        return -1;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

/* Run ncu on `kvx __counters device file`, its CSV into log; with rep, the
 * report written there and the CSV read back from it (ncu prints no table
 * for a run it exports).  The exit status, or -1 with err. */
static int run_ncu(const char *ncu, int device, const char *file, const CounterList *l, const char *rep,
                   const char *log, const char *errlog, KvxError *err)
{
    char self[2048], dev[16];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0) {
        kvx_error_set(err, KVX_EIO, NULL, "cannot find the kvx binary: %s", strerror(errno));
        return -1;
    }
    self[len] = '\0';
    snprintf(dev, sizeof dev, "%d", device);
    StrBuf metrics;
    sb_init(&metrics);
    counters_list_join(l, &metrics);
    /* --clock-control none: the card's clocks stay as they are.  --nvtx: each
     * launch carries its case's range (gpu/nvtx.h), which a kept report shows
     * and --nvtx-include can select.  No --quiet: it suppresses the report
     * itself; --log-file takes all ncu prints. */
    char *prof[] = {(char *)ncu, "--csv", "--page", "raw", "--clock-control", "none", "--nvtx",
                    "--metrics", (char *)sb_str(&metrics), "--log-file", (char *)log, self, "__counters",
                    dev, (char *)file, NULL};
    char *keep[] = {(char *)ncu, "--clock-control", "none", "--nvtx", "--metrics", (char *)sb_str(&metrics),
                    "--force-overwrite", "--export", (char *)rep, "--log-file", (char *)errlog, self,
                    "__counters", dev, (char *)file, NULL};
    char *import[] = {(char *)ncu, "--import", (char *)rep, "--csv", "--page", "raw", "--log-file",
                      (char *)log, NULL};
    int status = spawn_wait(rep ? keep : prof, errlog, err);
    if (rep && status == 0)
        status = spawn_wait(import, errlog, err);
    sb_free(&metrics);
    return status;
}

/* The error of a pass that stored fewer rows than cases: what ncu said, for
 * the user to act on (its exit, stderr, the log's head). */
static void pass_error(int status, int rows, int n, const KvxError *perr, const char *log,
                       const char *errlog, KvxError *err)
{
    size_t elen = 0;
    char *e = file_read(errlog, &elen);
    char *l = file_read(log, NULL);
    kvx_error_set(err, KVX_EFAIL, NULL, "ncu exited %d with %d of %d rows (%s)%s%.300s%s%.300s",
                  status, rows < 0 ? 0 : rows, n, perr->code ? perr->msg : "no log",
                  e && elen ? "; stderr: " : "", e ? e : "", l ? "; log: " : "", l ? l : "");
    free(e);
    free(l);
}

int counters_collect(const CaseDesc *cases, int n, int device, const CounterList *l, const char *rep,
                     double *vals, KvxError *err)
{
    for (size_t i = 0; i < (size_t)n * (size_t)l->n; i++)
        vals[i] = NAN;
    const char *ncu = counters_find_ncu();
    if (!ncu) {
        kvx_error_set(err, KVX_EFAIL, NULL, "no ncu (Nsight Compute) in $KVX_NCU, the toolkit or PATH");
        return -1;
    }
    const char *tmp = getenv("TMPDIR");
    char dir[1024], file[1100], log[1100], errlog[1100];
    snprintf(dir, sizeof dir, "%s/kvx-counters-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        kvx_error_set(err, KVX_EIO, NULL, "cannot create %s: %s", dir, strerror(errno));
        return -1;
    }
    snprintf(file, sizeof file, "%s/cases.bin", dir);
    snprintf(log, sizeof log, "%s/ncu.csv", dir);
    snprintf(errlog, sizeof errlog, "%s/ncu.err", dir);
    int rc = -1, status = -1;
    char *text = NULL;
    if (write_cases(file, cases, n, err) ||
        (status = run_ncu(ncu, device, file, l, rep, log, errlog, err)) < 0)
        goto done;
    text = file_read(log, NULL);
    KvxError perr = {0};
    int rows = text ? counters_parse(text, cases, n, l, vals, &perr) : -1;
    rc = rows < 0 ? -1 : rows;
    if (rows < n || status != 0)
        pass_error(status, rows, n, &perr, log, errlog, err);
    kvx_error_clear(&perr);
done:
    free(text);
    unlink(file);
    unlink(log);
    unlink(errlog);
    rmdir(dir);
    return rc;
}
