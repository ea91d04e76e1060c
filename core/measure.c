/* measure: the measurement settings' table (measure_fields) and what is
 * made of it: defaults, lookup by name, values checked and set from text,
 * the flags given laid over a spec's settings (measure_override), the JSON
 * stored and hashed (measure.h). */
#include "measure.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "num.h"
#include "util.h"

#define MEASURE_ROW(field_, key_, flag_, kind_, lo_, hi_, def_, arg_, help_)                               \
    {#field_, key_, flag_, kind_, lo_, hi_, def_, arg_, help_, offsetof(MeasureSettings, field_)},
const MeasureField measure_fields[MEASURE_COUNT] = {MEASURE_SETTINGS(MEASURE_ROW)};
#undef MEASURE_ROW

static void *slot(MeasureSettings *m, const MeasureField *f)
{
    return (char *)m + f->at;
}

static const void *cslot(const MeasureSettings *m, const MeasureField *f)
{
    return (const char *)m + f->at;
}

void measure_defaults(MeasureSettings *m)
{
    memset(m, 0, sizeof *m);
    for (const MeasureField *f = measure_fields; f < measure_fields + MEASURE_COUNT; f++) {
        switch (f->kind) {
        case MEASURE_INT:
        case MEASURE_FLUSH: *(int *)slot(m, f) = (int)f->def; break;
        case MEASURE_DOUBLE: *(double *)slot(m, f) = f->def; break;
        case MEASURE_U64: *(uint64_t *)slot(m, f) = (uint64_t)f->def; break;
        }
    }
}

const MeasureField *measure_find(const char *name)
{
    for (const MeasureField *f = measure_fields; f < measure_fields + MEASURE_COUNT; f++)
        if (!strcmp(f->key, name) || !strcmp(f->flag, name))
            return f;
    return NULL;
}

void measure_expect(const MeasureField *f, char *buf, size_t n)
{
    char lo[32], hi[32];
    num_bound_text(f->lo, lo, sizeof lo);
    num_bound_text(f->hi, hi, sizeof hi);
    const char *what = f->kind == MEASURE_DOUBLE ? "a number" : "a whole number";
    if (f->kind == MEASURE_FLUSH)
        snprintf(buf, n, "read, write, off, true or false");
    else if (f->kind == MEASURE_U64)
        snprintf(buf, n, "a whole number below 2^64");
    else if (isinf(f->hi))
        snprintf(buf, n, "%s >= %s", what, lo);
    else if (f->lo == 0)
        snprintf(buf, n, "%s up to %s", what, hi);
    else
        snprintf(buf, n, "%s from %s to %s", what, lo, hi);
}

static int set_flush(int *out, const char *text)
{
    static const struct { const char *name; int value; } names[] = {
        {"read", MEASURE_FLUSH_READ}, {"write", MEASURE_FLUSH_WRITE}, {"off", MEASURE_FLUSH_OFF},
        {"true", MEASURE_FLUSH_READ}, {"false", MEASURE_FLUSH_OFF}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(text, names[i].name)) {
            *out = names[i].value;
            return 0;
        }
    return -1;
}

int measure_set(MeasureSettings *m, const MeasureField *f, const char *text, char *expect, size_t n)
{
    uint64_t u;
    double d;
    int ok = 0;
    switch (f->kind) {
    case MEASURE_INT:
        ok = !num_read_u64(text, &u) && u <= INT_MAX && (double)u >= f->lo && (double)u <= f->hi;
        if (ok)
            *(int *)slot(m, f) = (int)u;
        break;
    case MEASURE_DOUBLE:
        ok = !num_read_double(text, &d) && d >= f->lo && d <= f->hi;
        if (ok)
            *(double *)slot(m, f) = d;
        break;
    case MEASURE_U64:
        ok = !num_read_u64(text, &u);
        if (ok)
            *(uint64_t *)slot(m, f) = u;
        break;
    case MEASURE_FLUSH: ok = !set_flush((int *)slot(m, f), text); break;
    }
    if (!ok)
        measure_expect(f, expect, n);
    return ok ? 0 : -1;
}

void measure_finish(MeasureSettings *m)
{
    if (m->max_samples < m->min_samples)
        m->max_samples = m->min_samples;
    if (m->sample_batch < 1)
        m->sample_batch = 1;
}

void measure_override(MeasureSettings *m, const MeasureSettings *over, const int given[MEASURE_COUNT])
{
    for (int i = 0; i < MEASURE_COUNT; i++)
        if (given[i]) {
            const MeasureField *f = &measure_fields[i];
            size_t size = f->kind == MEASURE_DOUBLE ? sizeof(double) : f->kind == MEASURE_U64 ? sizeof(uint64_t)
                                                                                               : sizeof(int);
            memcpy(slot(m, f), cslot(over, f), size);
        }
    measure_finish(m);
}

const char *measure_flush_name(int flush)
{
    return flush == MEASURE_FLUSH_READ ? "read" : flush == MEASURE_FLUSH_WRITE ? "write" : "off";
}

char *measure_json(const MeasureSettings *m)
{
    StrBuf b;
    sb_init(&b);
    for (const MeasureField *f = measure_fields; f < measure_fields + MEASURE_COUNT; f++) {
        sb_printf(&b, "%s\"%s\":", f == measure_fields ? "{" : ",", f->field);
        const void *v = cslot(m, f);
        switch (f->kind) {
        case MEASURE_INT: sb_printf(&b, "%d", *(const int *)v); break;
        case MEASURE_DOUBLE: sb_printf(&b, "%g", *(const double *)v); break;
        case MEASURE_U64: sb_printf(&b, "%llu", (unsigned long long)*(const uint64_t *)v); break;
        case MEASURE_FLUSH:
            sb_puts(&b, *(const int *)v == MEASURE_FLUSH_OFF ? "false" : *(const int *)v == MEASURE_FLUSH_READ
                                                                       ? "\"read\"" : "\"write\"");
            break;
        }
    }
    /* How the settings are used, fixed in this version of kvx but stored so
     * that a later one can tell. */
    sb_puts(&b, ",\"budget\":\"case\",\"stat\":\"median\",\"timer\":\"cuEvent\"}");
    return sb_take(&b);
}
