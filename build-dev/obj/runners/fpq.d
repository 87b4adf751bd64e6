build-dev/obj/runners/fpq.o: runners/fpq.c runners/fpq.h pricing/gpus.h \
 runners/util.h
runners/fpq.h:
pricing/gpus.h:
runners/util.h:
