/*
 * fp_time.c - a fingerprint's times: the ISO-8601 syntax fp_check accepts and
 * the same instant in UTC (see fp_check.h).  Below fp_check.c and fp_rows.c,
 * which both read times; it calls neither.
 */
#include "results/fp_check.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int digits(const char *s, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

int fp_iso8601(const char *s)
{
	int y, mo, d, h, mi, sec;
	if (!s || strlen(s) < 20 || digits(s, 4, &y) || s[4] != '-' || digits(s + 5, 2, &mo) || s[7] != '-' ||
	    digits(s + 8, 2, &d) || s[10] != 'T' || digits(s + 11, 2, &h) || s[13] != ':' ||
	    digits(s + 14, 2, &mi) || s[16] != ':' || digits(s + 17, 2, &sec))
		return 0;
	static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	if (y < 1970 || y > 9999 || mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || (mo == 2 && d == 29 && !leap) ||
	    h > 23 || mi > 59 || sec > 60)
		return 0;
	const char *p = s + 19;
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return 0;
		while (isdigit((unsigned char)*p))
			p++;
	}
	if (!strcmp(p, "Z"))
		return 1;
	int oh, om;
	return (*p == '+' || *p == '-') && strlen(p) == 6 && !digits(p + 1, 2, &oh) && p[3] == ':' &&
	       !digits(p + 4, 2, &om) && oh <= 23 && om <= 59;
}

int fp_iso8601_utc(const char *s, char *out, size_t size)
{
	struct tm tm = { 0 };
	int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0, oh = 0, om = 0;
	if (!fp_iso8601(s))
		return -1;
	digits(s, 4, &y);
	digits(s + 5, 2, &mo);
	digits(s + 8, 2, &d);
	digits(s + 11, 2, &h);
	digits(s + 14, 2, &mi);
	digits(s + 17, 2, &sec);
	const char *p = s + 19, *frac = p;
	if (*p == '.')
		for (p++; isdigit((unsigned char)*p); p++)
			;
	int flen = (int)(p - frac);
	if (*p == '+' || *p == '-') {
		digits(p + 1, 2, &oh);
		digits(p + 4, 2, &om);
	}
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	time_t t = timegm(&tm) - (*p == '-' ? -1 : *p == '+' ? 1 : 0) * (time_t)(oh * 3600 + om * 60);
	struct tm u;
	if (!gmtime_r(&t, &u) || flen > 16)
		return -1;
	snprintf(out, size, "%04d-%02d-%02dT%02d:%02d:%02d%.*sZ", u.tm_year + 1900, u.tm_mon + 1, u.tm_mday, u.tm_hour,
		 u.tm_min, u.tm_sec, flen, frac);
	return 0;
}
