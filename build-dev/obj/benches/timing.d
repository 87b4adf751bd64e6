build-dev/obj/benches/timing.o: benches/timing.c benches/bench.h
benches/bench.h:
