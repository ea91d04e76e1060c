/* version: the kvx that made a result (cmake/version.cmake): the release and
 * the commit it was built from, "0.2.0+g1a2b3c4d5e6f", ".dirty" when the
 * tree had changes.  Every run stores it and every cache key hashes it. */
#ifndef KVX_VERSION_H
#define KVX_VERSION_H

const char *version_text(void);

#endif
