build-dev/obj/pricing/catalog_data.o: pricing/catalog_data.c \
 pricing/catalog.h
pricing/catalog.h:
