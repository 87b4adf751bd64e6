build-dev/obj/runners/main.o: runners/main.c runners/cli.h \
 results/ident.h runners/util.h results/store.h
runners/cli.h:
results/ident.h:
runners/util.h:
results/store.h:
