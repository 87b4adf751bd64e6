build-dev/obj/benches/ctx.o: benches/ctx.c benches/bench.h
benches/bench.h:
