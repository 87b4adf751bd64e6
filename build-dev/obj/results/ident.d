build-dev/obj/results/ident.o: results/ident.c results/ident.h
results/ident.h:
