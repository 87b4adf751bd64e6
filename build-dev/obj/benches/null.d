build-dev/obj/benches/null.o: benches/null.c benches/bench.h
benches/bench.h:
