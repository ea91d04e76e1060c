/* hostref: a host reference's key and its result in a file (hostref.h).
 *
 * A result file is a header (HrefHead) and the Expected's arrays in field
 * order; a failure is KEY.fail holding the message; "finished" says the
 * writer will add nothing more, so a reader stops waiting.  Files are
 * written to a temporary name and renamed. */
#include "hostref.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/util.h"

#define HREF_MAGIC 0x31464552484b5658ull /* "XVKHREF1" */

typedef struct HrefHead {
    uint64_t magic;
    int32_t kind, is_float, has_f, has_u, member_type; /* member_type: -1 none */
    uint64_t count, nset, member_n, member_init_u;
    double member_init_f;
} HrefHead;

int hostref_slice_on_device(const CaseDesc *c, const CaseCheck *k)
{
    int in = k->nargs == 3 ? k->argbuf[0] : -1;
    return strcmp(k->ref, "slice") == 0 && in >= 0 && !c->bufs[in].checked &&
           c->bufs[in].type == c->bufs[k->buf].type;
}

int hostref_is_host(const CaseDesc *c, const CaseCheck *k)
{
    return k->ref[0] && strcmp(k->ref, "baseline") != 0 && strcmp(k->ref, "reference") != 0 &&
           !hostref_slice_on_device(c, k);
}

void hostref_key(const CaseDesc *c, const CaseCheck *k, char key[65])
{
    const CaseBuf *b = &c->bufs[k->buf];
    Sha256 h;
    sha256_init(&h);
    sha256_update(&h, k->ref, strlen(k->ref) + 1);
    for (int j = 0; j < k->nargs; j++) {
        const RefArg *a = &k->args[j];
        char text[96];
        if (a->is_buf)
            snprintf(text, sizeof text, "b:%s", c->bufs[k->argbuf[j]].input_key);
        else if (a->v.kind == VAL_STR)
            snprintf(text, sizeof text, "s:%s", a->v.s);
        else
            snprintf(text, sizeof text, "n:%d:%lld:%.17g", a->v.kind, (long long)a->v.i, a->v.d);
        sha256_update(&h, text, strlen(text) + 1);
    }
    char tail[64];
    snprintf(tail, sizeof tail, "%s:%llu", elem_types[b->type].name, (unsigned long long)b->count);
    sha256_update(&h, tail, strlen(tail) + 1);
    uint8_t digest[32];
    sha256_final(&h, digest);
    for (int i = 0; i < 32; i++)
        snprintf(key + 2 * i, 3, "%02x", digest[i]);
}

int hostref_dir_make(char *dir, size_t n, KvxError *err)
{
    const char *t = getenv("TMPDIR");
    snprintf(dir, n, "%s/kvx-hostrefs-XXXXXX", t && *t ? t : "/tmp");
    if (mkdtemp(dir))
        return 0;
    kvx_error_set(err, KVX_EIO, NULL, "cannot make '%s': %s", dir, strerror(errno));
    return -1;
}

void hostref_dir_remove(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char path[4096];
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
    closedir(d);
    rmdir(dir);
}

static void path_of(char *out, size_t n, const char *dir, const char *key, const char *ext)
{
    snprintf(out, n, "%s/%s%s", dir, key, ext);
}

/* The bytes of exp's arrays, in the order they are written. */
static void head_make(const Expected *exp, HrefHead *h, uint64_t nbytes[4])
{
    memset(h, 0, sizeof *h);
    *h = (HrefHead){.magic = HREF_MAGIC, .kind = (int32_t)exp->kind, .is_float = exp->is_float,
                    .has_f = exp->f != NULL, .has_u = exp->u != NULL,
                    .member_type = exp->member_vals ? (int32_t)exp->member_t->id : -1,
                    .count = exp->count, .nset = exp->set ? exp->nset : 0, .member_n = exp->member_n,
                    .member_init_u = exp->member_init_u, .member_init_f = exp->member_init_f};
    nbytes[0] = h->has_f ? exp->count * sizeof(double) : 0;
    nbytes[1] = h->has_u ? exp->count * sizeof(uint64_t) : 0;
    nbytes[2] = h->nset * sizeof(double);
    nbytes[3] = exp->member_vals ? exp->member_n * (uint64_t)exp->member_t->size : 0;
}

/* data to path, through a temporary name.  0 or -1 (errno). */
static int publish(const char *path, const void *const parts[], const uint64_t sizes[], int n)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return -1;
    int ok = 1;
    for (int i = 0; i < n && ok; i++)
        ok = !sizes[i] || fwrite(parts[i], 1, sizes[i], f) == sizes[i];
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        int saved = errno;
        unlink(tmp);
        errno = saved;
        return -1;
    }
    return 0;
}

int hostref_save(const char *dir, const char *key, const Expected *exp, const char *failure, KvxError *err)
{
    char path[4096];
    int rc;
    if (!exp) {
        path_of(path, sizeof path, dir, key, ".fail");
        const void *parts[] = {failure};
        uint64_t sizes[] = {strlen(failure)};
        rc = publish(path, parts, sizes, 1);
    } else {
        HrefHead h;
        uint64_t nb[4];
        head_make(exp, &h, nb);
        path_of(path, sizeof path, dir, key, "");
        const void *parts[] = {&h, exp->f, exp->u, exp->set, exp->member_vals};
        uint64_t sizes[] = {sizeof h, nb[0], nb[1], nb[2], nb[3]};
        rc = publish(path, parts, sizes, 5);
    }
    if (rc < 0)
        kvx_error_set(err, KVX_EIO, NULL, "cannot write '%s': %s", path, strerror(errno));
    return rc;
}

int hostref_finish(const char *dir, KvxError *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/finished", dir);
    const void *parts[] = {""};
    uint64_t sizes[] = {0};
    if (publish(path, parts, sizes, 1) == 0)
        return 0;
    kvx_error_set(err, KVX_EIO, NULL, "cannot write '%s': %s", path, strerror(errno));
    return -1;
}

static void *read_part(FILE *f, uint64_t n, int *ok)
{
    if (!n || !*ok)
        return NULL;
    void *p = mem_alloc(n);
    *ok = fread(p, 1, n, f) == n;
    return p;
}

/* The result file at path into exp.  1, or -1 with why. */
static int load_result(const char *path, Expected *exp, char *why, size_t nwhy)
{
    FILE *f = fopen(path, "rb");
    HrefHead h;
    int ok = f && fread(&h, sizeof h, 1, f) == 1 && h.magic == HREF_MAGIC &&
             h.member_type < (int32_t)ET_COUNT;
    memset(exp, 0, sizeof *exp);
    if (ok) {
        uint64_t msize = h.member_type >= 0 ? (uint64_t)elem_types[h.member_type].size : 0;
        *exp = (Expected){.kind = (ExpectKind)h.kind, .count = h.count, .is_float = h.is_float,
                          .nset = h.nset, .member_n = h.member_n, .member_init_u = h.member_init_u,
                          .member_init_f = h.member_init_f,
                          .member_t = h.member_type >= 0 ? &elem_types[h.member_type] : NULL};
        exp->f = read_part(f, h.has_f ? h.count * sizeof(double) : 0, &ok);
        exp->u = read_part(f, h.has_u ? h.count * sizeof(uint64_t) : 0, &ok);
        exp->set = read_part(f, h.nset * sizeof(double), &ok);
        exp->member_vals = read_part(f, h.member_n * msize, &ok);
    }
    if (f)
        fclose(f);
    if (ok)
        return 1;
    verify_expected_free(exp);
    snprintf(why, nwhy, "the host reference computed ahead at '%s' is unreadable", path);
    return -1;
}

int hostref_load(const char *dir, const char *key, Expected *exp, int *finished, char *why, size_t nwhy)
{
    char path[4096];
    memset(exp, 0, sizeof *exp);
    /* Looked at first: the writer publishes it last, so once it is seen
     * every key the writer will publish is there. */
    path_of(path, sizeof path, dir, "finished", "");
    int fin = access(path, F_OK) == 0;
    path_of(path, sizeof path, dir, key, "");
    if (access(path, F_OK) == 0)
        return load_result(path, exp, why, nwhy);
    path_of(path, sizeof path, dir, key, ".fail");
    size_t len = 0;
    char *text = file_read(path, &len);
    if (text) {
        snprintf(why, nwhy, "%s", text);
        free(text);
        return -1;
    }
    *finished = fin;
    return 0;
}
