build-dev/obj/benches/blockdev.o: benches/blockdev.c benches/blockdev.h
benches/blockdev.h:
