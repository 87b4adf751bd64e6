build-dev/obj/runners/cloud.o: runners/cloud.c runners/cloud.h \
 runners/util.h
runners/cloud.h:
runners/util.h:
