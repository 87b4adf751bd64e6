build-dev/obj/benches/gpu_math.o: benches/gpu_math.c benches/gpu_math.h \
 benches/bench.h
benches/gpu_math.h:
benches/bench.h:
