/* template: the template engine's interface (gen/template.c): a spec's
 * template parsed once (template_load, template_free), and a point's source
 * emitted from it (template_emit). */
#ifndef KVX_TEMPLATE_H
#define KVX_TEMPLATE_H

#include "plan.h"

/* A template, parsed once per spec (includes resolved, expressions parsed):
 * s's template into *out, for template_free.  0 or -1 with err. */
typedef struct Template Template;
int template_load(const Spec *s, Template **out, KvxError *err);
void template_free(Template *t);  /* accepts NULL */
/* Append the body of point pe's source to out; pe->used is reset to the code
 * axes it consults and pe->used_facts to whether it read a device fact.  With
 * origins (else NULL): "FILE:LINE\n" appended for each line of the body, from
 * its first, up to the last one that any template text or placeholder starts:
 * the template line it came from.  0 or -1 with err. */
int template_emit(const Template *t, PointEnv *pe, StrBuf *out, StrBuf *origins, KvxError *err);

#endif
