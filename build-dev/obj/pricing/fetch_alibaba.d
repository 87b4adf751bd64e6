build-dev/obj/pricing/fetch_alibaba.o: pricing/fetch_alibaba.c \
 pricing/fetch.h pricing/catalog.h runners/util.h
pricing/fetch.h:
pricing/catalog.h:
runners/util.h:
