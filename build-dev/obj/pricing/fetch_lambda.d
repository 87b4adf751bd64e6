build-dev/obj/pricing/fetch_lambda.o: pricing/fetch_lambda.c \
 pricing/fetch.h pricing/catalog.h runners/util.h
pricing/fetch.h:
pricing/catalog.h:
runners/util.h:
