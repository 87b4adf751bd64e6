build-dev/obj/pricing/fx.o: pricing/fx.c pricing/fx.h runners/util.h
pricing/fx.h:
runners/util.h:
