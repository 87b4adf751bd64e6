/*
 * tmpguard.h - a temporary file that a SIGTERM, SIGINT or SIGHUP does not
 * leave behind: the handler unlinks it (async-signal-safe), restores the
 * default action and re-raises the signal.
 */
#ifndef GPUVET_TMPGUARD_H
#define GPUVET_TMPGUARD_H

/* Guards path (copied) until tmpguard_clear(); one file at a time. */
void tmpguard_set(const char *path);
void tmpguard_clear(void);

#endif
