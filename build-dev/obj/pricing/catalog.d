build-dev/obj/pricing/catalog.o: pricing/catalog.c pricing/catalog.h \
 pricing/csvrows.h results/ident.h runners/util.h
pricing/catalog.h:
pricing/csvrows.h:
results/ident.h:
runners/util.h:
