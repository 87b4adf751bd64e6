/*
 * manual.h - the whole manual from every command's option table
 * (runners/opts.h): `gpuvet help COMMAND`, `gpuvet help man` and `gpuvet
 * help markdown` (runners/main.c), so --help, gpuvet.1 and docs/options.md
 * cannot disagree.  (runners/manual.c)
 */
#ifndef GPUVET_MANUAL_H
#define GPUVET_MANUAL_H

#include <stdio.h>

struct gv_cmd_doc;

#define GV_MAN_DATE "2026-11-25"   /* of the man page's text; bump when the tables change much */

/* Every command's doc, in the order of `gpuvet --help`; NULL-terminated. */
extern const struct gv_cmd_doc *const gv_cmd_docs[];
/* The man page gpuvet.1 (roff, man(7) macros) from every command's table. */
void gv_man_page(FILE *f);
/*
 * `gpuvet help man`: to a terminal, the page formatted and paged by `man -l -` (as man(1) shows an installed
 * page; $MANPAGER/$PAGER apply); into a pipe or a file, or where man cannot be run, the roff source, for
 * `> gpuvet.1`.  An exit code (0, or 2 when the page could not be written).
 */
int gv_man_page_show(void);
/* docs/options.md from the same tables. */
void gv_options_markdown(FILE *f);

#endif
