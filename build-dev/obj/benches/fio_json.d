build-dev/obj/benches/fio_json.o: benches/fio_json.c benches/fio_json.h
benches/fio_json.h:
