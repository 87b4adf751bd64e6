build-dev/obj/benches/objstore.o: benches/objstore.c benches/bench.h \
 benches/objstore_util.h
benches/bench.h:
benches/objstore_util.h:
