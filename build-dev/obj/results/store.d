build-dev/obj/results/store.o: results/store.c results/store.h \
 results/fp_check.h runners/util.h
results/store.h:
results/fp_check.h:
runners/util.h:
