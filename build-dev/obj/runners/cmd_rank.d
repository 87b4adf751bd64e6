build-dev/obj/runners/cmd_rank.o: runners/cmd_rank.c reports/rank.h \
 results/store.h runners/cli.h runners/util.h
reports/rank.h:
results/store.h:
runners/cli.h:
runners/util.h:
