build-dev/obj/benches/nvme.o: benches/nvme.c benches/bench.h \
 benches/blockdev.h benches/fio_json.h
benches/bench.h:
benches/blockdev.h:
benches/fio_json.h:
