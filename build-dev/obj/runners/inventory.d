build-dev/obj/runners/inventory.o: runners/inventory.c \
 runners/inventory.h runners/cloud.h runners/inv_parse.h runners/util.h \
 benches/gv_nvml.h benches/steady.h benches/bench.h pricing/gpus.h
runners/inventory.h:
runners/cloud.h:
runners/inv_parse.h:
runners/util.h:
benches/gv_nvml.h:
benches/steady.h:
benches/bench.h:
pricing/gpus.h:
