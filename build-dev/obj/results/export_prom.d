build-dev/obj/results/export_prom.o: results/export_prom.c \
 results/export_prom.h results/export.h results/ident.h results/store.h \
 runners/util.h
results/export_prom.h:
results/export.h:
results/ident.h:
results/store.h:
runners/util.h:
