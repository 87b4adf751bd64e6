build-dev/obj/runners/policy.o: runners/policy.c runners/policy.h \
 runners/flags.h runners/fpq.h pricing/gpus.h runners/util.h \
 results/ident.h
runners/policy.h:
runners/flags.h:
runners/fpq.h:
pricing/gpus.h:
runners/util.h:
results/ident.h:
