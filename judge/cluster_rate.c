/*
 * cluster_rate.c - the stated network rate per instance type
 * (judge/published/network.csv, compiled in; judge/published/README.md
 * gives its provenance).  Each row: provider, instance type, the rate in
 * Gbps as the provider states it, the network cards it is spread over, the
 * fabric (efa, ena, ...), the source's address, what it says, notes.  A type
 * without a sourced row has no stated rate: the analysis then judges
 * against the cluster median alone.
 */
#include "judge/cluster.h"
#include "common/embed.h"
#include "pricing/csvrows.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

GV_EMBED(gv_network_csv, "judge/published/network.csv");

#define RATE_MAX_ROWS 64

struct rate_row {
	char provider[16];
	char type[64];
	double gbps;           /* GB/s per node: the stated Gbps / 8 */
	int cards;
	char source[256];      /* "SOURCE: SAYS", cut to fit */
};

static struct rate_row rows[RATE_MAX_ROWS];
static size_t nrows;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static int take_row(void *ud, char **f, const size_t *lens, size_t n, long line)
{
	(void)ud;
	(void)lens;
	if (line == 1)
		return 0;   /* the header */
	if (n != 8 || nrows >= RATE_MAX_ROWS)
		return 0;   /* the unit test checks every row is taken */
	struct rate_row *r = &rows[nrows];
	char *end;
	r->gbps = strtod(f[2], &end) / 8.0;
	r->cards = atoi(f[3]);
	if (*end || !(r->gbps > 0) || r->cards < 1)
		return 0;
	snprintf(r->provider, sizeof r->provider, "%s", f[0]);
	snprintf(r->type, sizeof r->type, "%s", f[1]);
	snprintf(r->source, sizeof r->source, "%s Gbps, %s (\"%s\")", f[2], f[5], f[6]);
	nrows++;
	return 0;
}

static void load(void)
{
	struct csvrows *r = csvrows_new(take_row, NULL);
	if (!r)
		return;
	size_t len = (size_t)(gv_network_csv_end - gv_network_csv);
	if (csvrows_feed(r, gv_network_csv, len) < 0 || csvrows_finish(r) < 0)
		nrows = 0;
	csvrows_free(r);
}

static const struct rate_row *find(const char *provider, const char *type)
{
	pthread_once(&once, load);
	if (!type || !*type)
		return NULL;
	for (size_t i = 0; i < nrows; i++)
		if (!strcasecmp(rows[i].type, type) && (!provider || !*provider || !strcmp(provider, "unknown") ||
							 !strcasecmp(rows[i].provider, provider)))
			return &rows[i];
	return NULL;
}

int cluster_stated_rate(const char *provider, const char *instance_type, double *gbps, const char **source)
{
	const struct rate_row *r = find(provider, instance_type);
	if (!r)
		return -1;
	*gbps = r->gbps;
	if (source)
		*source = r->source;
	return 0;
}

int cluster_stated_cards(const char *provider, const char *instance_type)
{
	const struct rate_row *r = find(provider, instance_type);
	return r ? r->cards : 1;
}

/*
 * The single-flow limit a provider states: one TCP connection (libfabric's tcp provider carries a
 * pair over one) never reaches a card's share of a large instance, so over tcp a pair is held to
 * the lower of the two.  One row per provider, quoted from its documentation.
 */
static const struct {
	const char *provider;
	double gbps;        /* GB/s = the stated Gbps / 8 */
	const char *source;
} flows[] = {
	{ "aws", 5.0 / 8, "5 Gbps, https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/ec2-instance-network-bandwidth.html "
			  "(\"Bandwidth for single-flow traffic is limited to 5 Gbps when instances are not in the same "
			  "cluster placement group\"; up to 10 Gbps within one)" },
};

int cluster_flow_rate(const char *provider, double *gbps, const char **source)
{
	for (size_t i = 0; provider && i < sizeof flows / sizeof flows[0]; i++)
		if (!strcasecmp(flows[i].provider, provider)) {
			*gbps = flows[i].gbps;
			if (source)
				*source = flows[i].source;
			return 0;
		}
	return -1;
}
