/* inspect_disasm: SASS text for a CUBIN.  Finds nvdisasm (or cuobjdump) once,
 * runs it on the CUBIN through a private temporary directory and returns its
 * listing; inspect_job ties PTX, SASS and compile figures together for one
 * compiled variant.  Without a disassembler the PTX facts stand alone. */
#define _GNU_SOURCE     /* pipe2 */
#include "inspect_internal.h"
#include "jit_internal.h"
#include "kvx_product.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* ---- disassembler ------------------------------------------------------------ */

static char g_tool[4096];
static const char *g_origin = "";
static pthread_once_t g_tool_once = PTHREAD_ONCE_INIT;

static int tool_at(const char *dir, const char *name)
{
    if (path_exe_at(dir, name, g_tool, sizeof g_tool))
        return 1;
    g_tool[0] = '\0';
    return 0;
}

/* Where the PyPI package nvidia-cuda-nvdisasm puts its binary under a
 * `pip install --target DIR`: DIR/nvidia/cuNN/bin. */
static int pypi_at(const char *target)
{
    static const char *const majors[] = {"cu13", "cu12", "cu14", "cu15"};
    for (size_t i = 0; i < sizeof majors / sizeof majors[0]; i++) {
        char dir[1200];
        snprintf(dir, sizeof dir, "%s/nvidia/%s/bin", target, majors[i]);
        if (tool_at(dir, "nvdisasm"))
            return 1;
    }
    return 0;
}

/* kvx's own tools folder, where `make` set-up installs the PyPI nvdisasm:
 * first beside the binary, as `cmake --install` lays it out
 * (PREFIX/bin/kvx -> PREFIX/libexec/kvx/tools) and as a build tree does
 * (build/kvx -> .kvx/tools, so a moved checkout still finds it), then the
 * source tree kvx was built from: an installed kvx must not depend on it. */
static int pypi_tools(void)
{
    char exe[2048];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    char *slash = n > 0 ? (exe[n] = '\0', strrchr(exe, '/')) : NULL;
    if (slash) {
        *slash = '\0';
        static const char *const beside[] = {"../libexec/kvx/tools/nvdisasm", "../.kvx/tools/nvdisasm"};
        for (size_t i = 0; i < sizeof beside / sizeof beside[0]; i++) {
            char dir[2200], real[PATH_MAX];
            snprintf(dir, sizeof dir, "%s/%s", exe, beside[i]);
            /* The folder as doctor and the stored facts name it: no "..". */
            if (realpath(dir, real) && pypi_at(real))
                return 1;
        }
    }
#ifdef KVX_TOOLS_DIR
    if (pypi_at(KVX_TOOLS_DIR "/nvdisasm"))
        return 1;
#endif
    return 0;
}

static int on_path(const char *name)
{
    if (path_search(name, g_tool, sizeof g_tool))
        return 1;
    g_tool[0] = '\0';
    return 0;
}

/* $KVX_NVDISASM; the toolkit's nvdisasm; PATH's; the PyPI package's in kvx's
 * tools folder; then cuobjdump from the toolkit or PATH. */
static void find_tool(void)
{
    const char *env = getenv("KVX_NVDISASM");
    if (env && *env && access(env, X_OK) == 0) {
        snprintf(g_tool, sizeof g_tool, "%s", env);
        g_origin = "$KVX_NVDISASM";
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
    const char *dirs[] = {home, path_cuda, built, "/usr/local/cuda/bin"};
    static const char *const NAMES[] = {"nvdisasm", "cuobjdump"};
    for (int t = 0; t < 2; t++) {
        for (size_t d = 0; d < sizeof dirs / sizeof dirs[0]; d++)
            if (tool_at(dirs[d], NAMES[t])) {
                g_origin = "the CUDA toolkit";
                return;
            }
        if (on_path(NAMES[t])) {
            g_origin = "PATH";
            return;
        }
        if (t == 0 && pypi_tools()) {
            g_origin = "the PyPI package nvidia-cuda-nvdisasm in kvx's tools folder";
            return;
        }
    }
}

const char *inspect_disassembler_origin(void)
{
    pthread_once(&g_tool_once, find_tool);
    return g_tool[0] ? g_origin : "";
}

const char *inspect_find_disassembler(void)
{
    pthread_once(&g_tool_once, find_tool);
    return g_tool[0] ? g_tool : NULL;
}

/* The tool's stdout for `tool --version`, at most n - 1 bytes.  0 or -1. */
static int tool_version_text(const char *tool, char *text, size_t n)
{
    int fd[2];
    if (pipe2(fd, O_CLOEXEC) != 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    char *argv[] = {(char *)tool, (char *)"--version", NULL};
    pid_t pid;
    int rc = posix_spawn(&pid, tool, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    size_t got = 0;
    ssize_t r;
    while (rc == 0 && got + 1 < n && (r = read(fd[0], text + got, n - 1 - got)) != 0) {
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            break;
        got += (size_t)r;
    }
    text[got] = '\0';
    close(fd[0]);
    if (rc == 0)
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
    return rc == 0 && got > 0 ? 0 : -1;
}

void inspect_tool_version(const char *tool, char *out, size_t n)
{
    char text[2048];
    snprintf(out, n, "unknown");
    if (!tool || tool_version_text(tool, text, sizeof text) != 0)
        return;
    /* "Cuda compilation tools, release 13.5, V13.5.37": the V number, else the release. */
    const char *v = strstr(text, ", V");
    if (v) {
        size_t k = strcspn(v + 3, " \n\r");
        snprintf(out, n, "%.*s", (int)k, v + 3);
    } else if ((v = strstr(text, "release "))) {
        size_t k = strcspn(v + 8, ", \n\r");
        snprintf(out, n, "%.*s", (int)k, v + 8);
    }
}

static char g_version[64];
static pthread_once_t g_version_once = PTHREAD_ONCE_INIT;

static void fill_version(void)
{
    inspect_tool_version(inspect_find_disassembler(), g_version, sizeof g_version);
}

const char *inspect_disassembler_version(void)
{
    pthread_once(&g_version_once, fill_version);
    return g_version;
}

char *inspect_disassemble(const void *cubin, size_t len, KvxError *err)
{
    const char *tool = inspect_find_disassembler();
    return tool ? inspect_disassemble_with(tool, cubin, len, err) : NULL;
}

/* One run of a disassembler: a temporary folder with the CUBIN and the
 * tool's stderr, the pipe its stdout comes through, and the child.  Zeroed
 * with the pipe at -1, so that disasm_close undoes whatever was done. */
typedef struct Disasm {
    char dir[1024], bin[1100], errf[1100];
    int made;                   /* dir exists */
    int pipefd[2];
    pid_t pid;
    int spawned;                /* pid not yet waited for */
    StrBuf out;
} Disasm;

static int disasm_files(Disasm *d, const void *cubin, size_t len, KvxError *err)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(d->dir, sizeof d->dir, "%s/kvx-inspect-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(d->dir)) {
        kvx_error_set(err, KVX_EIO, NULL, "cannot create a temporary directory %s: %s", d->dir,
                      strerror(errno));
        return -1;
    }
    d->made = 1;
    snprintf(d->bin, sizeof d->bin, "%s/kernel.cubin", d->dir);
    snprintf(d->errf, sizeof d->errf, "%s/stderr.txt", d->dir);
    if (file_write_atomic(d->bin, cubin, len) != 0) {
        kvx_error_set(err, KVX_EIO, NULL, "cannot write %s: %s", d->bin, strerror(errno));
        return -1;
    }
    return 0;
}

/* Start tool on the CUBIN (cuobjdump -sass, else nvdisasm -c), stdout to the
 * pipe, stderr to errf. */
static int disasm_spawn(Disasm *d, const char *tool, KvxError *err)
{
    const char *slash = strrchr(tool, '/');
    int cuobjdump = strstr(slash ? slash + 1 : tool, "cuobjdump") != NULL;
    char *argv[] = {(char *)tool, (char *)(cuobjdump ? "-sass" : "-c"), d->bin, NULL};
    /* Other threads spawn too (disassemblers, compile processes): keep our
     * pipe out of their children from the start, or the EOF we wait for
     * would wait for them. */
    if (pipe2(d->pipefd, O_CLOEXEC) != 0) {
        kvx_error_set(err, KVX_EIO, NULL, "pipe: %s", strerror(errno));
        return -1;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, d->pipefd[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, d->errf, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int rc = posix_spawn(&d->pid, tool, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(d->pipefd[1]);
    d->pipefd[1] = -1;
    if (rc != 0) {
        kvx_error_set(err, KVX_EIO, NULL, "cannot run %s: %s", tool, strerror(rc));
        return -1;
    }
    d->spawned = 1;
    return 0;
}

/* The tool's stdout into d->out until it closes, then its exit; 0 when it
 * exited 0, else -1 with err naming the status and its stderr attached. */
static int disasm_collect(Disasm *d, const char *tool, KvxError *err)
{
    char buf[65536];
    ssize_t n;
    while ((n = read(d->pipefd[0], buf, sizeof buf)) != 0) {
        if (n < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        sb_put(&d->out, buf, (size_t)n);
    }
    int status = 0;
    while (waitpid(d->pid, &status, 0) < 0 && errno == EINTR)
        ;
    d->spawned = 0;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    size_t mlen = 0;
    char *msg = file_read(d->errf, &mlen);
    if (WIFEXITED(status))
        kvx_error_set(err, KVX_EIO, NULL, "%s failed on the CUBIN (exit status %d)", tool,
                      WEXITSTATUS(status));
    else
        kvx_error_set(err, KVX_EIO, NULL, "%s failed on the CUBIN (signal %d)", tool,
                      WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    if (msg && mlen)
        kvx_error_attach_log(err, msg, mlen);
    free(msg);
    return -1;
}

static void disasm_close(Disasm *d)
{
    if (d->spawned)
        waitpid(d->pid, NULL, 0);
    if (d->pipefd[0] >= 0)
        close(d->pipefd[0]);
    sb_free(&d->out);
    if (d->made) {
        unlink(d->bin);
        unlink(d->errf);
        rmdir(d->dir);
    }
}

char *inspect_disassemble_with(const char *tool, const void *cubin, size_t len, KvxError *err)
{
    Disasm d = {.pipefd = {-1, -1}};
    sb_init(&d.out);
    char *out = NULL;
    if (disasm_files(&d, cubin, len, err) || disasm_spawn(&d, tool, err) ||
        disasm_collect(&d, tool, err))
        goto fail;
    out = sb_take(&d.out);
    if (!out)
        out = mem_strdup("");
fail:
    disasm_close(&d);
    return out;
}

/* The PTX facts and compile figures of job, then the SASS of listing (NULL:
 * none) with the disassembler's name. */
static void job_facts(const JitJob *job, const char *listing, InspectFacts *f)
{
    inspect_facts_init(f);
    if (job->ptx)
        inspect_ptx(job->ptx, f);
    inspect_set_compile(f, job);
    if (!listing)
        return;
    inspect_sass(listing, f);
    const char *tool = inspect_find_disassembler(), *base = tool ? strrchr(tool, '/') : NULL;
    snprintf(f->tool, sizeof f->tool, "%.20s %.40s", base ? base + 1 : tool ? tool : "",
             inspect_disassembler_version());
}

/* The name of an entry's kept listing: the disassembler (path, size,
 * mtime), and the files that cut a program's listing to a member
 * (KVX_FACTS_PRODUCT). */
static void sass_name(char *name, size_t n)
{
    const char *tool = inspect_find_disassembler();
    struct stat st;
    char id[4400];
    snprintf(id, sizeof id, "listing|%s|%lld|%lld|%s", tool ? tool : "-",
             tool && stat(tool, &st) == 0 ? (long long)st.st_size : 0LL,
             tool && stat(tool, &st) == 0 ? (long long)st.st_mtime : 0LL, KVX_FACTS_PRODUCT);
    char hex[65];
    sha256_hex(id, strlen(id), hex);
    snprintf(name, n, "sass-%.16s.txt", hex);
}

/* The job's listing made now: its CUBIN disassembled, cut to its own
 * functions where it is a grouped program's member. */
static char *sass_made(const JitJob *job, KvxError *err)
{
    char *sass = inspect_disassemble(job->cubin, job->cubin_len, err);
    if (!sass || !job->symbol[0])
        return sass;
    char *own = jit_group_sass(sass, job);     /* the program's listing cut to this member */
    free(sass);
    return own;
}

char *inspect_job_sass(const JitJob *job, KvxError *err)
{
    if (!job->cubin || !job->cubin_len || !inspect_find_disassembler())
        return NULL;
    char name[64];
    sass_name(name, sizeof name);
    size_t len = 0;
    char *kept = jit_cache_get(job, name, &len);
    if (kept)
        return kept;
    char *sass = sass_made(job, err);
    if (sass)
        jit_cache_put(job, name, sass, strlen(sass));  /* best-effort: a disassembly next time */
    return sass;
}

int inspect_job_keep_sass(const JitJob *job, const char *sass)
{
    char name[64];
    sass_name(name, sizeof name);
    return jit_cache_put(job, name, sass, strlen(sass));
}

int inspect_job(const JitJob *job, InspectFacts *f, KvxError *err)
{
    KvxError e = {0};
    char *sass = inspect_job_sass(job, &e);
    job_facts(job, sass, f);
    free(sass);
    if (!e.code)
        return 0;               /* SASS read, or no disassembler: PTX facts only */
    if (err && !err->code)
        *err = e;               /* hands the log over */
    else
        kvx_error_clear(&e);
    return -1;
}

void inspect_job_facts_from(const JitJob *job, const char *listing, StrBuf *out)
{
    InspectFacts f;
    job_facts(job, listing, &f);
    inspect_to_json(&f, out);
}

/* ---- inspection results kept in the compile cache ------------------------------- */

/* The cache file's name: what the facts depend on besides the cubin: the
 * disassembler (path, size, mtime), the extractor's files
 * (KVX_FACTS_PRODUCT, cmake/product.cmake) and INSPECT_SCHEMA; never the
 * commit, so that a kvx built elsewhere with the same extractor reads them. */
static void cache_name(char *name, size_t n)
{
    const char *tool = inspect_find_disassembler();
    struct stat st;
    char id[4400];
    snprintf(id, sizeof id, "%s|%lld|%lld|%s|%d", tool ? tool : "-",
             tool && stat(tool, &st) == 0 ? (long long)st.st_size : 0LL,
             tool && stat(tool, &st) == 0 ? (long long)st.st_mtime : 0LL, KVX_FACTS_PRODUCT, INSPECT_SCHEMA);
    char hex[65];
    sha256_hex(id, strlen(id), hex);
    snprintf(name, n, "inspect-%.16s.json", hex);
}

int inspect_job_facts(const JitJob *job, StrBuf *out, KvxError *err)
{
    InspectFacts f;
    int rc = inspect_job(job, &f, err);
    inspect_to_json(&f, out);
    return rc;
}

int inspect_job_keep(const JitJob *job, const char *json, size_t len)
{
    char name[64];
    cache_name(name, sizeof name);
    return jit_cache_put(job, name, json, len);
}

int inspect_job_json(const JitJob *job, StrBuf *out, KvxError *err)
{
    char name[64];
    cache_name(name, sizeof name);
    size_t len = 0;
    char *text = jit_cache_get(job, name, &len);
    if (text) {
        sb_put(out, text, len);
        free(text);
        return 0;
    }
    StrBuf b;
    sb_init(&b);
    int rc = inspect_job_facts(job, &b, err);
    sb_put(out, b.p ? b.p : "", b.len);
    /* A cache that cannot be written costs a disassembly next time. */
    if (rc == 0)
        jit_cache_put(job, name, b.p ? b.p : "", b.len);
    sb_free(&b);
    return rc;
}
