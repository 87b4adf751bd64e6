build-dev/obj/runners/cmd_accept.o: runners/cmd_accept.c runners/accept.h \
 runners/cli.h runners/fpq.h runners/policy.h runners/util.h \
 results/store.h
runners/accept.h:
runners/cli.h:
runners/fpq.h:
runners/policy.h:
runners/util.h:
results/store.h:
