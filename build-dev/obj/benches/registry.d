build-dev/obj/benches/registry.o: benches/registry.c benches/bench.h
benches/bench.h:
