build-dev/obj/pricing/csvrows.o: pricing/csvrows.c pricing/csvrows.h \
 runners/util.h
pricing/csvrows.h:
runners/util.h:
