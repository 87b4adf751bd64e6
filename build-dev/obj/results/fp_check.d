build-dev/obj/results/fp_check.o: results/fp_check.c results/fp_check.h \
 results/ident.h
results/fp_check.h:
results/ident.h:
