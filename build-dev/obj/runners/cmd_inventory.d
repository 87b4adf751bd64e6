build-dev/obj/runners/cmd_inventory.o: runners/cmd_inventory.c \
 runners/cli.h runners/cloud.h runners/inventory.h runners/util.h
runners/cli.h:
runners/cloud.h:
runners/inventory.h:
runners/util.h:
