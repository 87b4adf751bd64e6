build-dev/obj/runners/proctree.o: runners/proctree.c runners/proctree.h \
 benches/bench.h
runners/proctree.h:
benches/bench.h:
