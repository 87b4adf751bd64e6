/*
 * fprun_int.h - private to results/: the parts of the one reader
 * (results/fprun_decode.c) that the store's loader (store_load_run.c) calls
 * for the texts it keeps in columns.
 */
#ifndef GPUVET_FPRUN_INT_H
#define GPUVET_FPRUN_INT_H

#include "results/fprun.h"

/* The inventory object at node inv of t into r->inv (its text, devices, XIDs). */
void fprun_decode_inventory(struct fprun *r, const struct jtree *t, uint32_t inv);
/* An object's members from its JSON text (a stored params or config); absent for NULL or not an object. */
struct fp_obj fprun_decode_obj_text(struct fprun *r, const char *text);

#endif
