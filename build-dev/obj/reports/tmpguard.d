build-dev/obj/reports/tmpguard.o: reports/tmpguard.c reports/tmpguard.h
reports/tmpguard.h:
