build-dev/obj/benches/gpu_dl.o: benches/gpu_dl.c benches/gpu_dl.h
benches/gpu_dl.h:
