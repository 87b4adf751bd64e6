/*
 * severity.h - a flag's severity: the one list of names and the one order,
 * lowest first (info, warning, critical).  The judge raises flags at them,
 * the store checks an import's, the Prometheus export counts them, the report
 * sorts worst first by them: every folder reads this list, none keeps its own.
 */
#ifndef GPUVET_SEVERITY_H
#define GPUVET_SEVERITY_H

enum gv_severity { GV_SEV_INFO, GV_SEV_WARNING, GV_SEV_CRITICAL, GV_SEVERITIES };

/* "info" 0, "warning" 1, "critical" 2; -1 for NULL or any other text. */
int gv_severity_rank(const char *name);
/* The name of a rank; "?" out of range. */
const char *gv_severity_name(int rank);

#endif
