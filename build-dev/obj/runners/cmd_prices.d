build-dev/obj/runners/cmd_prices.o: runners/cmd_prices.c \
 pricing/catalog.h pricing/fetch.h pricing/fx.h results/store.h \
 runners/cli.h runners/util.h
pricing/catalog.h:
pricing/fetch.h:
pricing/fx.h:
results/store.h:
runners/cli.h:
runners/util.h:
