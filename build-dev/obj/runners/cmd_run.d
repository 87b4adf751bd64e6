build-dev/obj/runners/cmd_run.o: runners/cmd_run.c runners/cli.h \
 benches/blockdev.h runners/policy.h runners/hooks.h runners/run.h \
 benches/bench.h runners/inventory.h runners/summary.h runners/util.h \
 results/store.h
runners/cli.h:
benches/blockdev.h:
runners/policy.h:
runners/hooks.h:
runners/run.h:
benches/bench.h:
runners/inventory.h:
runners/summary.h:
runners/util.h:
results/store.h:
