build-dev/obj/runners/flags.o: runners/flags.c runners/flags.h \
 runners/fpq.h runners/inv_parse.h pricing/gpus.h runners/util.h
runners/flags.h:
runners/fpq.h:
runners/inv_parse.h:
pricing/gpus.h:
runners/util.h:
