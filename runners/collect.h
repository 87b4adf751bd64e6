/*
 * collect.h - `results import`, `results merge` and `results export --to`:
 * moving runs into and out of the store in bulk (runners/collect.c, and
 * runners/collect_s3.c for object storage).
 */
#ifndef GPUVET_COLLECT_H
#define GPUVET_COLLECT_H

#include <stddef.h>
#include <stdint.h>

struct store;
struct naming;  /* runners/naming.h */

/* Commit a batch after this many fingerprints (at a file or store boundary). */
#define COLLECT_BATCH 2000

/* Each file: one fingerprint or an array, streamed; all-or-nothing per file. Exit code. */
int collect_import(struct store *s, int n, char **paths, struct naming *nm);
/* Each source: a store's path or s3://BUCKET/PREFIX/. Exit code. */
int collect_merge(struct store *s, int n, char **sources);
/* One object per run under s3://BUCKET/PREFIX/, named UUID.json, never overwritten. Exit code. */
int collect_export_s3(struct store *s, const int64_t *ids, size_t n, const char *url);
/* The S3-compatible endpoint (--endpoint); NULL: AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, else AWS. */
void collect_set_endpoint(const char *url);
/* Every run under s3://BUCKET/PREFIX/ the store lacks. Exit code. */
int collect_merge_s3(struct store *s, const char *url, int *added, int *skipped);

#endif
