/* version: version_text (version.h).  The only file that includes the
 * generated header, so that a new commit recompiles one file. */
#include "version.h"

#include "kvx_version.h"

const char *version_text(void)
{
    return KVX_VERSION;
}
