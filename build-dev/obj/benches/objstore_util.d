build-dev/obj/benches/objstore_util.o: benches/objstore_util.c \
 benches/objstore_util.h
benches/objstore_util.h:
