/*
 * fabric_pair_bench.c - one fabric pair (benches/fabric.h) between two
 * processes of this program on one address: the parent forks the peer, the
 * two swap endpoint addresses through pipes and call fabric_pair as two
 * cluster nodes do.  Prints "provider wait gbps_ab gbps_ba lat_us".  Built and run
 * by fabric_vs_pingpong.sh; not part of make check.
 *
 *   fabric_pair_bench [IP [SECONDS_EACH_WAY [LAT_ITERS]]]   (127.0.0.1, 1, 2000)
 */
#include "benches/fabric.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int side(const char *ip, int lower, int out, int in, const struct fabric_pair_opts *o)
{
	struct fabric *f;
	char err[256], peer[600];
	if (fabric_open(ip, &f, err, sizeof err)) {
		fprintf(stderr, "fabric_pair_bench: %s\n", err);
		return 1;
	}
	dprintf(out, "%s\n", fabric_addr(f));
	size_t n = 0;
	while (n + 1 < sizeof peer && read(in, peer + n, 1) == 1 && peer[n] != '\n')
		n++;
	peer[n] = '\0';
	struct fabric_pair_result r;
	int rc = fabric_pair(f, peer, lower, o, &r, err, sizeof err);
	if (rc)
		fprintf(stderr, "fabric_pair_bench: %s\n", err);
	else if (lower)
		printf("%s %s %.4f %.4f %.2f\n", fabric_provider(f), fabric_wait(f), r.gbps_ab, r.gbps_ba, r.lat_us);
	fabric_close(f);
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *ip = argc > 1 ? argv[1] : "127.0.0.1";
	struct fabric_pair_opts o = { .seconds_each_way = argc > 2 ? atof(argv[2]) : 1.0,
				      .lat_iters = argc > 3 ? atoi(argv[3]) : 2000, .timeout_ms = 120000 };
	int ab[2], ba[2];
	if (pipe(ab) || pipe(ba))
		return 1;
	fflush(stdout);
	pid_t p = fork();
	if (p == 0)
		_exit(side(ip, 0, ba[1], ab[0], &o));
	int rc = side(ip, 1, ab[1], ba[0], &o);
	int st = 0;
	waitpid(p, &st, 0);
	return rc || !WIFEXITED(st) || WEXITSTATUS(st) ? 1 : 0;
}
