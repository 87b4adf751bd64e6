build-dev/obj/pricing/fetch.o: pricing/fetch.c pricing/fetch.h \
 pricing/catalog.h runners/util.h
pricing/fetch.h:
pricing/catalog.h:
runners/util.h:
