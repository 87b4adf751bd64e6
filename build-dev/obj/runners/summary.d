build-dev/obj/runners/summary.o: runners/summary.c runners/summary.h \
 results/ident.h runners/flags.h
runners/summary.h:
results/ident.h:
runners/flags.h:
