build-dev/obj/pricing/fetch_aws.o: pricing/fetch_aws.c pricing/csvrows.h \
 pricing/fetch.h pricing/catalog.h runners/util.h
pricing/csvrows.h:
pricing/fetch.h:
pricing/catalog.h:
runners/util.h:
