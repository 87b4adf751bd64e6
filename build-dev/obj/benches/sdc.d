build-dev/obj/benches/sdc.o: benches/sdc.c benches/sdc.h
benches/sdc.h:
