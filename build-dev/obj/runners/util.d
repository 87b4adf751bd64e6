build-dev/obj/runners/util.o: runners/util.c runners/util.h
runners/util.h:
