// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rt-guest-seqcheck: reads `ringtap stream` lines on stdin and checks the
 * test source's per-CPU sequence numbers (seq=N cpu=C): every one seen
 * once, none twice. Notes the time each line arrives and reports the
 * longest silence between two records: across a restart that is the time
 * from the last record the old daemon delivered to the first the new one
 * did. A stream that was cut and resumed says so in three lines, counted
 * as resumes; any other "# " line (a loss, a gap) is printed and counted.
 *
 * usage: ringtap stream ... | rt-guest-seqcheck NCPUS > report
 * report: "records R dups D cpuN count C max M ... comments K longest_gap_ms G resumes S"
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_CPUS 64
#define MAX_SEQ (1u << 24)

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	unsigned int ncpus = argc > 1 ? (unsigned int)atoi(argv[1]) : 1;
	static unsigned char *seen[MAX_CPUS];
	uint64_t count[MAX_CPUS] = { 0 }, max[MAX_CPUS] = { 0 }, records = 0, dups = 0;
	unsigned long comments = 0, resumes = 0;
	double last = 0, longest = 0;
	char line[4096];

	if (!ncpus || ncpus > MAX_CPUS)
		return 2;
	for (unsigned int i = 0; i < ncpus; i++)
		if (!(seen[i] = calloc(MAX_SEQ / 8, 1)))
			return 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (fgets(line, sizeof(line), stdin)) {
		const char *s = strstr(line, " seq="), *c = strstr(line, " cpu=");
		unsigned long long seq;
		unsigned int cpu;
		double t = now_ms();

		/* A stream cut and resumed where it was (--reconnect): no comment on the events. */
		if (!strncmp(line, "# end: the connection was cut", 29) ||
		    !strncmp(line, "# connection to ringtapd lost", 29) ||
		    !strncmp(line, "# resumed ", 10)) {
			resumes += line[2] == 'r';
			printf("resume: %s", line);
			continue;
		}
		if (line[0] == '#') {
			comments++;
			printf("comment: %s", line);
			continue;
		}
		if (!s || !c || sscanf(s, " seq=%llu", &seq) != 1 || sscanf(c, " cpu=%u", &cpu) != 1 ||
		    cpu >= ncpus || seq >= MAX_SEQ)
			continue;
		if (last && t - last > longest)
			longest = t - last;
		/* Each long silence with its end (monotonic seconds, as /proc/uptime counts): which restart. */
		if (last && t - last > 300)
			printf("silence: %.0f ms up to %.3f s\n", t - last, t / 1e3);
		last = t;
		records++;
		if (seen[cpu][seq / 8] & (1u << (seq % 8))) {
			dups++;
			continue;
		}
		seen[cpu][seq / 8] |= (unsigned char)(1u << (seq % 8));
		count[cpu]++;
		if (seq + 1 > max[cpu])
			max[cpu] = seq + 1;
	}
	/* Where numbers are missing: the first few runs, to say where they went. */
	for (unsigned int i = 0; i < ncpus; i++) {
		unsigned int runs = 0;

		for (uint64_t q = 0; q < max[i] && runs < 8; q++) {
			uint64_t from = q;

			if (seen[i][q / 8] & (1u << (q % 8)))
				continue;
			while (q + 1 < max[i] && !(seen[i][(q + 1) / 8] & (1u << ((q + 1) % 8))))
				q++;
			printf("missing: cpu%u seq %" PRIu64 " to %" PRIu64 "\n", i, from, q);
			runs++;
		}
	}
	printf("records %" PRIu64 " dups %" PRIu64, records, dups);
	for (unsigned int i = 0; i < ncpus; i++)
		printf(" cpu%u count %" PRIu64 " max %" PRIu64, i, count[i], max[i]);
	printf(" comments %lu longest_gap_ms %.0f resumes %lu\n", comments, longest, resumes);
	return 0;
}
