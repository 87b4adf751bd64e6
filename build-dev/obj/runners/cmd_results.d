build-dev/obj/runners/cmd_results.o: runners/cmd_results.c runners/cli.h \
 runners/summary.h runners/util.h results/export.h results/ident.h \
 results/store.h
runners/cli.h:
runners/summary.h:
runners/util.h:
results/export.h:
results/ident.h:
results/store.h:
