build-dev/obj/benches/steady.o: benches/steady.c benches/steady.h \
 benches/bench.h
benches/steady.h:
benches/bench.h:
