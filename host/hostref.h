/* hostref: a host reference's identity, and its result kept in a file.
 *
 * Every variant of a workload point checks against the same host reference
 * (count_below, histogram, ...), so the parent computes each one once, ahead
 * of the GPU, as soon as the hand-out order is known (run/run_ahead.c), into a
 * folder of its own; a worker whose case names that folder
 * (CaseDesc.hostref_dir) reads the result when its case comes instead of
 * computing it.  A file is published by rename, so a reader sees it whole or
 * not at all.  Both ends are the same binary: the file is the Expected's own
 * fields and arrays, not a format to keep. */
#ifndef KVX_HOSTREF_H
#define KVX_HOSTREF_H

#include "case.h"

/* 1 when check k of c is slice(BUF, start, count) (`out: in` among them) of
 * an input of the output's type: the input's device copy is the reference,
 * nothing is computed. */
int hostref_slice_on_device(const CaseDesc *c, const CaseCheck *k);

/* 1 when check k of c is computed on the host: a reference function, not a
 * constant, the baseline's or a reference kernel's output, nor a slice of an
 * input of the output's type (compared with the input's device copy). */
int hostref_is_host(const CaseDesc *c, const CaseCheck *k);

/* The key of k's result: the reference, its inputs (by their generation keys)
 * and scalar arguments, and the output's type and size; 64 hex digits.  Equal
 * keys, equal results, whichever variant or process asks. */
void hostref_key(const CaseDesc *c, const CaseCheck *k, char key[65]);

/* A new empty folder for results, under $TMPDIR (else /tmp), into dir (n
 * bytes).  0, or -1 with err. */
int hostref_dir_make(char *dir, size_t n, KvxError *err);
/* Remove dir and the files in it (hostref_dir_make's). */
void hostref_dir_remove(const char *dir);

/* Publish exp (not taken) under key in dir, or, with exp NULL, the message of
 * a reference that could not be computed.  0, or -1 with err. */
int hostref_save(const char *dir, const char *key, const Expected *exp, const char *failure, KvxError *err);

/* Mark dir finished: no key will be added to it.  0, or -1 with err. */
int hostref_finish(const char *dir, KvxError *err);

/* Read key's result from dir into exp (the caller's, freed with
 * verify_expected_free).  1 read; 0 not there (yet: *finished says whether
 * it ever will be); -1 there as a failure (why holds its message) or
 * unreadable. */
int hostref_load(const char *dir, const char *key, Expected *exp, int *finished, char *why, size_t nwhy);

#endif
