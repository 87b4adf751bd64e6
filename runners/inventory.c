/* inventory.c - placeholder: reports no GPU until the inventory lands (issue 2). */
#include "runners/inventory.h"

json_t *inventory_collect(const struct inventory_opts *o)
{
	(void)o;
	return json_pack("{s:[],s:s}", "gpus", "gpu_error", "inventory not built yet");
}
int inventory_gpu_count(const json_t *inv) { return (int)json_array_size(json_object_get(inv, "gpus")); }
const char *inventory_gpu_error(const json_t *inv) { return json_string_value(json_object_get(inv, "gpu_error")); }
const char *inventory_gpu_model(const json_t *inv) { (void)inv; return NULL; }
const char *inventory_provider(const json_t *inv) { (void)inv; return "unknown"; }
const char *inventory_instance_type(const json_t *inv) { (void)inv; return NULL; }
const char *inventory_region(const json_t *inv) { (void)inv; return NULL; }
void inventory_print(const json_t *inv, FILE *f) { (void)inv; fputs("inventory not built yet\n", f); }
