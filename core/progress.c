/* progress: a long step's progress on stderr (progress.h). */
#include "progress.h"

#include <stdio.h>
#include <unistd.h>

#include "util.h"

void progress_start(Progress *p, const char *what, int total)
{
    *p = (Progress){.what = what, .total = total, .tty = isatty(STDERR_FILENO), .t0 = wall_now_ms()};
}

/* "12/2080 (0%), 40.1/s, ETA 51 s" */
static void line(const Progress *p, double s)
{
    double rate = s > 0 ? p->done / s : 0;
    fprintf(stderr, "%s: %d/%d (%d%%), %.1f/s", p->what, p->done, p->total,
            p->total ? 100 * p->done / p->total : 100, rate);
    if (rate > 0 && p->done < p->total)
        fprintf(stderr, ", ETA %.0f s", (p->total - p->done) / rate);
}

void progress_step(Progress *p, int n)
{
    p->done += n;
    double s = (wall_now_ms() - p->t0) / 1000;
    if (p->tty) {
        fputc('\r', stderr);
        line(p, s);
        fputs("   ", stderr);
        p->shown = 1;
        return;
    }
    /* a log: a line a tenth of the work, once the step has taken long enough
     * for a reader to wonder */
    int tenth = p->total ? 10 * p->done / p->total : 10;
    if (s < PROGRESS_QUIET_S || tenth == p->tenth)
        return;
    p->tenth = tenth;
    line(p, s);
    fputc('\n', stderr);
}

void progress_end(Progress *p)
{
    if (p->tty && p->shown)
        fprintf(stderr, "\r%*s\r", 80, "");
    p->shown = 0;
}
