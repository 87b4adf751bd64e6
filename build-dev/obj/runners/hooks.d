build-dev/obj/runners/hooks.o: runners/hooks.c runners/hooks.h \
 reports/html.h runners/accept.h runners/flags.h runners/util.h \
 results/store.h
runners/hooks.h:
reports/html.h:
runners/accept.h:
runners/flags.h:
runners/util.h:
results/store.h:
