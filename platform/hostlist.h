/*
 * hostlist.h - Slurm's compressed host lists ("gpu[07-09,12],rack[1-2]-n[1-2]",
 * SLURM_JOB_NODELIST) read as Slurm expands them: items separated by commas,
 * each a name with bracketed ranges (a range's lower bound fixes its zero
 * padding), several ranges in one name giving every combination, the last
 * varying fastest.  With one task per node, rank R of a job runs on the R-th
 * host.  And whether a host name resolves to an address (the rendezvous'
 * check of a Slurm rank's source address).  The parser is fuzzed
 * (tests/fuzz/fuzz_hostlist.c).
 */
#ifndef GPUVET_HOSTLIST_H
#define GPUVET_HOSTLIST_H

#include <stddef.h>

#define HOSTLIST_MAX 1000000L   /* hosts in one list, at most */

/* How many hosts the list names; -1 when it is not a host list (or names over HOSTLIST_MAX). */
long hostlist_count(const char *list);
/* The n-th host (from 0) into out; -1 when the list is not one, n is past its end or out is too short. */
int hostlist_nth(const char *list, long n, char *out, size_t outlen);
/*
 * Whether host resolves (getaddrinfo, the system's resolver: /etc/hosts, DNS) to the address
 * addr (IPv4 or IPv6 text): 1 yes, 0 no (what it resolves to in seen, comma-separated, cut to
 * seenlen), -1 it does not resolve.
 */
int hostlist_resolves_to(const char *host, const char *addr, char *seen, size_t seenlen);

#endif
