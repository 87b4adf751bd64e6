/* cmd_inventory.c - `gpuvet inventory`: what machine is this. */
#include "runners/cli.h"
#include "runners/opts.h"
#include "runners/cloud.h"
#include "runners/inventory.h"
#include "common/util.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

enum { O_PROVIDER = 256, O_SKU, O_REGION, O_NO_MD, O_HELP };
static const struct gv_opt inventory_opts[] = {
	{ .name = "json", .has_arg = no_argument, .val = 'j', .arg = NULL,
	  .help = "print the inventory as JSON (for scripts)" },
	{ .name = "provider", .has_arg = required_argument, .val = O_PROVIDER, .arg = "P",
	  .help = "cloud provider (aws, lambda, alibaba): overrides the metadata" },
	{ .name = "sku", .has_arg = required_argument, .val = O_SKU, .arg = "TYPE",
	  .help = "instance type (p5.48xlarge, gpu_8x_h100_sxm5, ...): overrides" },
	{ .name = "region", .has_arg = required_argument, .val = O_REGION, .arg = "R",
	  .help = "region: overrides the metadata" },
	{ .name = "no-metadata", .has_arg = no_argument, .val = O_NO_MD, .arg = NULL,
	  .help = "do not ask the metadata services (also GPUVET_NO_METADATA=1)" },
	{ .name = "help", .has_arg = no_argument, .val = O_HELP, .arg = NULL, .help = "this text" },
	{ .name = NULL },
};

const struct gv_cmd_doc cmd_inventory_doc = {
	.name = "inventory",
	.synopsis = "inventory [--json] [--provider P] [--sku TYPE] [--region R] [--no-metadata]",
	.about = "What machine is this: GPUs (NVML: model, memory, driver, PCIe, NVLink, ECC,\n"
		"retired pages/remapped rows, virtualization and MIG mode, NUMA affinity), CPU,\n"
		"NUMA nodes, memory, disks, kernel and OS, and the cloud identity from the\n"
		"instance metadata services (AWS IMDSv2, Alibaba; Lambda by heuristic), each\n"
		"bounded by a 1 s deadline.",
	.opts = inventory_opts,
	.more = "A machine without an NVIDIA driver is reported with no GPU and the reason.",
};

/* Overrides are identities, checked as `run` and `results import` check them. */
static int inv_check_value(const char *opt, const char *v)
{
	return gv_check_identity("inventory", opt, v);
}

int cmd_inventory(int argc, char **argv, const struct gv_global *g)
{
	struct option longopts[8];
	gv_opts_getopt(inventory_opts, longopts, 8);
	struct inventory_opts o = { 0 };
	int json = 0, c;

	(void)g;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = 1;
			break;
		case O_PROVIDER:
			if (inv_check_value("--provider", optarg))
				return GV_EXIT_USAGE;
			o.provider = optarg;
			break;
		case O_SKU:
			if (inv_check_value("--sku", optarg))
				return GV_EXIT_USAGE;
			o.sku = optarg;
			break;
		case O_REGION:
			if (inv_check_value("--region", optarg))
				return GV_EXIT_USAGE;
			o.region = optarg;
			break;
		case O_NO_MD:
			o.no_metadata = 1;
			break;
		case O_HELP:
			gv_cmd_help(&cmd_inventory_doc, stdout);
			return GV_EXIT_OK;
		default:
			return gv_opt_refused("inventory", argc, argv, longopts);
		}
	}
	if (optind < argc)
		return gv_usage_error("inventory", "unexpected argument '%s'", argv[optind]);

	json_t *inv = inventory_collect(&o);
	if (!inv) {
		gv_err("cannot collect the inventory");
		return GV_EXIT_UNMEASURABLE;
	}
	if (json) {
		if (json_dumpf(inv, stdout, JSON_INDENT(2) | JSON_SORT_KEYS) != 0) {
			json_decref(inv);
			gv_err("cannot write the inventory to stdout");
			return GV_EXIT_USAGE;
		}
		fputc('\n', stdout);
	} else {
		inventory_print(inv, stdout);
	}
	json_decref(inv);
	if (fflush(stdout) != 0) {
		gv_err("cannot write to stdout");
		return GV_EXIT_USAGE;
	}
	return GV_EXIT_OK;
}
