build-dev/obj/reports/html_escape.o: reports/html_escape.c \
 reports/html_escape.h
reports/html_escape.h:
