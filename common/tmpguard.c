/* tmpguard.c - see tmpguard.h */
#include "common/tmpguard.h"

#include <limits.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static char guarded[PATH_MAX];
static volatile sig_atomic_t armed;
static struct sigaction old_term, old_int, old_hup;

static void on_signal(int sig)
{
	if (armed)
		unlink(guarded);
	signal(sig, SIG_DFL);
	raise(sig);
}

void tmpguard_set(const char *path)
{
	size_t n = strlen(path);
	if (n >= sizeof guarded)
		return;
	memcpy(guarded, path, n + 1);
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGHUP, &sa, &old_hup);
	armed = 1;
}

void tmpguard_clear(void)
{
	if (!armed)
		return;
	armed = 0;
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
}
