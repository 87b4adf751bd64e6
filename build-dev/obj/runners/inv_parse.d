build-dev/obj/runners/inv_parse.o: runners/inv_parse.c \
 runners/inv_parse.h runners/util.h
runners/inv_parse.h:
runners/util.h:
