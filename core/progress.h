/* progress: a long step's progress on stderr, for kvx compile and kvx
 * inspect: on a terminal one line rewritten in place (count, rate, ETA), in
 * a log a plain line for each tenth of the work, once the step has run
 * PROGRESS_QUIET_S (a quick step says nothing). */
#ifndef KVX_PROGRESS_H
#define KVX_PROGRESS_H

#define PROGRESS_QUIET_S 2.0

typedef struct Progress {
    const char *what;           /* "kvx compile: sm_90" */
    int total, done;
    int tty;                    /* stderr is a terminal */
    int tenth;                  /* the last tenth a log line was printed for */
    int shown;                  /* a terminal line is up, to be cleared */
    double t0;                  /* ms */
} Progress;

void progress_start(Progress *p, const char *what, int total);
/* n more done; callers serialise the calls (on_done runs under a lock) */
void progress_step(Progress *p, int n);
/* The terminal line cleared. */
void progress_end(Progress *p);

#endif
