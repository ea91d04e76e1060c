/* version_other: version_text of kvx-othercommit, the kvx binary built from
 * the same sources as if at another commit (tests/test_cache_key.c): the
 * compile cache must serve it everything the real one compiled. */
#include "core/version.h"

const char *version_text(void)
{
    return "0.2.0+g0123456789ab (another commit: tests/version_other.c)";
}
