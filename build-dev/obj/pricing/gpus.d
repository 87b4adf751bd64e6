build-dev/obj/pricing/gpus.o: pricing/gpus.c pricing/gpus.h \
 benches/gpu_math.h benches/bench.h
pricing/gpus.h:
benches/gpu_math.h:
benches/bench.h:
