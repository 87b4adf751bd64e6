build-dev/obj/reports/html.o: reports/html.c reports/html.h \
 reports/tmpguard.h reports/html_escape.h reports/report_assets.h \
 reports/sha256.h reports/svg.h reports/rank.h pricing/catalog.h \
 pricing/gpus.h results/store.h runners/util.h
reports/html.h:
reports/tmpguard.h:
reports/html_escape.h:
reports/report_assets.h:
reports/sha256.h:
reports/svg.h:
reports/rank.h:
pricing/catalog.h:
pricing/gpus.h:
results/store.h:
runners/util.h:
