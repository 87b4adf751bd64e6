/*
 * cloud.h - which cloud, instance type, region and zone this machine is.
 *
 * Asked of the instance metadata services, all at once through one libcurl
 * multi handle and bounded by one deadline (default 1 s; 300 ms to
 * connect), so a machine outside any cloud, or a service that hangs, costs
 * at most that:
 *   AWS      IMDSv2: PUT /latest/api/token (X-aws-ec2-metadata-token-ttl-seconds),
 *            then GET /latest/meta-data/{instance-type, placement/region,
 *            placement/availability-zone, instance-id} with X-aws-ec2-metadata-token
 *            (IMDSv1 GETs when the token PUT is answered with an error status)
 *   Alibaba  GET http://100.100.100.200/latest/meta-data/{instance/instance-type,
 *            region-id, zone-id, instance-id}, with the hardened-mode token
 *            (PUT /latest/api/token, X-aliyun-ecs-metadata-token[-ttl-seconds])
 *            when the service hands one out
 *   Lambda   has no metadata service: a heuristic (cloud_guess below)
 * When no service answers, DMI strings give the provider alone (source
 * "heuristic").  --provider/--sku/--region override field by field (source
 * "override").
 */
#ifndef GPUVET_CLOUD_H
#define GPUVET_CLOUD_H

#include <jansson.h>
#include <stddef.h>

struct cloud_id {
	char provider[16];       /* "aws", "alibaba", "lambda", "unknown" */
	char instance_type[64];  /* "" when unknown */
	char region[64];
	char zone[64];
	char instance_id[96];
	char source[16];         /* "imds", "heuristic", "override", "none" */
	char evidence[160];      /* what a heuristic decided on; "" otherwise */
};

struct cloud_opts {
	const char *provider, *sku, *region;  /* overrides, NULL when not given */
	int no_metadata;                      /* skip the services */
	int timeout_ms;                       /* whole probe; 0: 1000 */
	int hypervisor_flag;                  /* cpuinfo says we are a VM (for the Lambda heuristic) */
};

/*
 * Fills id.  Never fails: what cannot be learnt stays "" / "unknown".
 * Environment: GPUVET_IMDS_AWS, GPUVET_IMDS_ALIBABA (base URLs, for
 * tests), GPUVET_NO_METADATA=1 (skip the services), GPUVET_SYSROOT (prefix
 * for /sys/class/dmi/id and /etc/apt, for tests).
 */
void cloud_detect(const struct cloud_opts *o, struct cloud_id *id);

json_t *cloud_to_json(const struct cloud_id *id);

/* Local evidence for the heuristic (read by cloud_detect from DMI and /etc). */
struct cloud_evidence {
	char sys_vendor[128], product_name[128], board_vendor[128];
	char bios_vendor[128], bios_version[128];
	char hypervisor_uuid[64];  /* /sys/hypervisor/uuid (Xen): "ec2..." on old AWS */
	int lambda_repo;           /* an apt source names archive.lambdalabs.com (Lambda Stack) */
	int hypervisor_flag;       /* x86 cpuinfo "hypervisor" flag */
};

/*
 * Provider from local evidence alone: "aws", "alibaba", "lambda" or NULL;
 * why gets the evidence in words.  Pure, for tests.
 */
const char *cloud_guess(const struct cloud_evidence *e, char *why, size_t whylen);

/* A metadata answer worth keeping: 1..63 bytes of [A-Za-z0-9._-]. */
int cloud_value_ok(const char *s, size_t len);

#endif
