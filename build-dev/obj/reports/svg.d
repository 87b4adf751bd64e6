build-dev/obj/reports/svg.o: reports/svg.c reports/svg.h \
 reports/html_escape.h
reports/svg.h:
reports/html_escape.h:
