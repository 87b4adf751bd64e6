build-dev/obj/runners/cmd_report.o: runners/cmd_report.c runners/cli.h \
 runners/util.h reports/html.h results/store.h
runners/cli.h:
runners/util.h:
reports/html.h:
results/store.h:
