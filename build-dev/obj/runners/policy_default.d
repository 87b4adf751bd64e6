build-dev/obj/runners/policy_default.o: runners/policy_default.c
