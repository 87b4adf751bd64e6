/*
 * cost_published.h - `gpuvet cost --published`: every published throughput
 * the cost model is checked against (judge/published/cost_published.csv,
 * compiled in; its README gives the provenance), each predicted from the
 * reference figures of its GPU model alone, with its band, the ratio and
 * whether the band holds it; and a summary per task kind.
 */
#ifndef GPUVET_COST_PUBLISHED_H
#define GPUVET_COST_PUBLISHED_H

#include <jansson.h>
#include <stddef.h>

/*
 * {"rows":[{"id","model","task","stack","gpu_model","gpus","settings","published","source","source_group",
 * "notes","fitted","predicted","low","high","ratio","inside","band_note","tp","pp","cp","dp"}...],
 * "summary":{"cases","sources","by_gpu":{...},"kinds":[{"task","cases","checked","inside","share_inside",
 * "geomean_ratio","median_high_over_low"}...]}}; NULL with err when the compiled-in file does not parse.
 */
json_t *cost_published_json(char *err, size_t errlen);

#endif
