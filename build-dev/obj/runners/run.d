build-dev/obj/runners/run.o: runners/run.c runners/run.h benches/bench.h \
 runners/inventory.h runners/util.h runners/proctree.h results/store.h \
 pricing/gpus.h
runners/run.h:
benches/bench.h:
runners/inventory.h:
runners/util.h:
runners/proctree.h:
results/store.h:
pricing/gpus.h:
