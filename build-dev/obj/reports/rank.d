build-dev/obj/reports/rank.o: reports/rank.c reports/rank.h \
 pricing/catalog.h pricing/fx.h pricing/gpus.h results/store.h \
 runners/util.h
reports/rank.h:
pricing/catalog.h:
pricing/fx.h:
pricing/gpus.h:
results/store.h:
runners/util.h:
