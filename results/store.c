/* store.c - placeholder, being written. */
#include "results/store.h"
#include <stdlib.h>
const char *store_default_path(void) { return "gpuvet.db"; }
