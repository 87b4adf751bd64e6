build-dev/obj/reports/sha256.o: reports/sha256.c reports/sha256.h
reports/sha256.h:
