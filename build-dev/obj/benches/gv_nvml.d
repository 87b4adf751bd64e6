build-dev/obj/benches/gv_nvml.o: benches/gv_nvml.c benches/gv_nvml.h \
 benches/steady.h benches/bench.h
benches/gv_nvml.h:
benches/steady.h:
benches/bench.h:
