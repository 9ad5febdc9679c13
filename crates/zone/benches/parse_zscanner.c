/* Peer measurement for the parse benches: Knot DNS's zone scanner (libzscanner) over
 * the same file, read into memory first, timed like benches/parse_file.rs (wall clock
 * and thread CPU time; only parsing, records handed to a counting callback).
 *
 *   cc -O2 -o /tmp/parse_zscanner crates/zone/benches/parse_zscanner.c -lzscanner
 *   /tmp/parse_zscanner /tmp/tld/zone.txt tld. 5
 *
 * Needs libzscanner and its headers (Debian: libknot-dev). Not built by cargo. */
#include <libzscanner/scanner.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static unsigned long records, rdata_bytes, errors;

static void on_record(zs_scanner_t *s) { records++; rdata_bytes += s->r_data_length; }
static void on_error(zs_scanner_t *s) {
	if (errors++ < 5)
		fprintf(stderr, "line %lu: %s\n", (unsigned long)s->line_counter, zs_strerror(s->error.code));
}

static double seconds(clockid_t clock) {
	struct timespec t;
	clock_gettime(clock, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
	if (argc < 3) {
		fprintf(stderr, "usage: %s ZONEFILE ORIGIN [RUNS]\n", argv[0]);
		return 2;
	}
	int runs = argc > 3 ? atoi(argv[3]) : 5;
	FILE *f = fopen(argv[1], "rb");
	if (f == NULL) { perror(argv[1]); return 1; }
	fseek(f, 0, SEEK_END);
	long size = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *text = malloc(size);
	if (text == NULL || fread(text, 1, size, f) != (size_t)size) { perror("read"); return 1; }
	fclose(f);
	for (int run = 1; run <= runs; run++) {
		zs_scanner_t s;
		records = rdata_bytes = errors = 0;
		if (zs_init(&s, argv[2], 1, 3600) != 0 || zs_set_input_string(&s, text, size) != 0 ||
		    zs_set_processing(&s, on_record, on_error, NULL) != 0) {
			fprintf(stderr, "zscanner setup failed\n");
			return 1;
		}
		double wall = seconds(CLOCK_MONOTONIC), cpu = seconds(CLOCK_THREAD_CPUTIME_ID);
		zs_parse_all(&s);
		wall = seconds(CLOCK_MONOTONIC) - wall;
		cpu = seconds(CLOCK_THREAD_CPUTIME_ID) - cpu;
		zs_deinit(&s);
		printf("run %d: %ld bytes, %lu records (%lu bytes of RDATA, %lu errors) in %.3f s: "
		       "%.1f MB/s; CPU %.3f s: %.1f MB/s\n", run, size, records, rdata_bytes, errors,
		       wall, size / wall / 1e6, cpu, size / cpu / 1e6);
	}
	return 0;
}
