/*
 * embed.h - the one way gpuvet compiles a file into itself: the price
 * catalogs, the host bench's JPEG set, the report's stylesheet and script,
 * the default acceptance policy.
 *
 *   GV_EMBED(gv_report_css, "reports/assets/report.css");
 *
 * declares `const char gv_report_css[]` holding the file's bytes, followed by
 * a NUL (so a text file is also a C string), and `gv_report_css_end`, which
 * points at that NUL: the size is gv_report_css_end - gv_report_css.  The
 * assembler's .incbin reads PATH relative to the directory make compiles in
 * (the repository root); the Makefile makes the object depend on the file.
 */
#ifndef GPUVET_EMBED_H
#define GPUVET_EMBED_H

#define GV_EMBED(sym, path)                                  \
	__asm__(".pushsection .rodata\n"                     \
		".balign 16\n"                               \
		".globl " #sym "\n"                          \
		#sym ":\n"                                   \
		".incbin \"" path "\"\n"                     \
		".globl " #sym "_end\n"                      \
		#sym "_end:\n"                               \
		".byte 0\n"                                  \
		".popsection\n");                            \
	extern const char sym[], sym##_end[]

#endif
