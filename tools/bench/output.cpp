// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fractos-bench's output: the result tables, the ratio helpers
 * (add_ratio, add_bandwidth, add_slope), the final ratio table and the
 * JSON.  Declared in harness.hpp.
 */
#include "harness.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <sys/utsname.h>
#include <unistd.h>

namespace fbench {

/* ---- output ------------------------------------------------------------ */

namespace {

const char *rule =
	"-----------------------------------------------------------------------------------------------------";

void json_num(FILE *f, double x)
{
	if (std::isnan(x))
		fprintf(f, "null");
	else
		fprintf(f, "%.4f", x);
}

void json_str(FILE *f, const std::string &s)
{
	putc('"', f);
	for (char c : s) {
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if ((unsigned char)c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			putc(c, f);
	}
	putc('"', f);
}

void print_json(FILE *jf)
{
	struct utsname u {};

	uname(&u);
	fprintf(jf, "{\n  \"tool\": \"fractos-bench\",\n  \"kernel\": ");
	json_str(jf, u.release);
	fprintf(jf, ",\n  \"cpus\": %ld", sysconf(_SC_NPROCESSORS_ONLN));
	fprintf(jf, ",\n  \"iters_max\": %" PRIu64 ",\n  \"seconds_max\": %g,\n"
	       "  \"rounds\": %u,\n  \"timer_ns\": %.1f,\n  \"pingpong_affinity\": ",
	       opt.iters, opt.seconds, opt.rounds, timer_ns);
	json_str(jf, opt.affinity);
	fprintf(jf, ",\n  \"results\": [");
	for (size_t i = 0; i < results.size(); i++) {
		const Result &r = results[i];

		fprintf(jf, "%s\n    {\"name\": ", i ? "," : "");
		json_str(jf, r.name);
		if (r.skipped) {
			fprintf(jf, ", \"skipped\": ");
			json_str(jf, r.note);
			fprintf(jf, "}");
			continue;
		}
		if (!r.note.empty()) {
			fprintf(jf, ", \"source\": ");
			json_str(jf, r.note);
		}
		fprintf(jf, ", \"iters\": %" PRIu64 ", \"t_avg_us\": %.4f, "
		       "\"t_p50_us\": %.4f, \"t_p99_us\": ",
		       r.iters, r.avg_ns / 1e3, r.p50_ns / 1e3);
		json_num(jf, r.p99_ns / 1e3);
		fprintf(jf, ", \"ops_per_s\": %.1f, \"ops_per_sample\": %" PRIu64
		       ", \"t_round_avg_us\": [", 1e9 / r.avg_ns, r.group);
		for (size_t k = 0; k < r.round_ns.size(); k++) {
			fprintf(jf, "%s", k ? ", " : "");
			json_num(jf, r.round_ns[k] / 1e3);
		}
		fprintf(jf, "]}");
	}
	fprintf(jf, "\n  ],\n  \"ratios\": [");
	for (size_t i = 0; i < ratios.size(); i++) {
		fprintf(jf, "%s\n    {\"name\": ", i ? "," : "");
		json_str(jf, ratios[i].name);
		fprintf(jf, ", \"from_avg\": %.4f, \"from_p50\": %.4f, \"round_min\": ",
		       ratios[i].avg, ratios[i].p50);
		json_num(jf, ratios[i].rmin);
		fprintf(jf, ", \"round_max\": ");
		json_num(jf, ratios[i].rmax);
		fprintf(jf, ", \"unit\": ");
		json_str(jf, ratios[i].unit);
		fprintf(jf, "}");
	}
	fprintf(jf, "\n  ],\n  \"wire\": [");
	for (size_t i = 0; i < wires.size(); i++) {
		fprintf(jf, "%s\n    {\"name\": ", i ? "," : "");
		json_str(jf, wires[i].name);
		fprintf(jf, ", \"msgs_per_op\": %.2f, \"bytes_per_op\": %.1f}",
			wires[i].msgs, wires[i].bytes);
	}
	fprintf(jf, "\n  ]\n}\n");
}

} // namespace

void print_header(const char *title)
{
	if (opt.json)
		return;
	printf("\n%s\n %-44s %10s %10s %10s %10s %12s %6s\n%s\n", rule,
	       title, "iters", "t_avg[us]", "t_p50[us]", "t_p99[us]",
	       "ops/s", "grp", rule);
	fflush(stdout);
}

void print_row(const Result &r)
{
	if (opt.json)
		return;
	if (r.skipped)
		printf(" %-44s skipped: %s\n", r.name.c_str(), r.note.c_str());
	else if (std::isnan(r.p99_ns))	/* a perftest baseline */
		printf(" %-44s %10s %10.3f %10.3f %10s %12.0f %6s\n",
		       r.name.c_str(), r.note.c_str(), r.avg_ns / 1e3,
		       r.p50_ns / 1e3, "-", 1e9 / r.avg_ns, "-");
	else
		printf(" %-44s %10" PRIu64 " %10.3f %10.3f %10.3f %12.0f %6" PRIu64 "\n",
		       r.name.c_str(), r.iters, r.avg_ns / 1e3, r.p50_ns / 1e3,
		       r.p99_ns / 1e3, 1e9 / r.avg_ns, r.group);
	fflush(stdout);
}

std::vector<Ratio> ratios;

const Result *find(const std::string &name)
{
	for (const Result &r : results)
		if (r.name == name && !r.skipped)
			return &r;
	return nullptr;
}

/* time(a) / time(b), from t_avg and from t_p50, if both ran */
void add_ratio(const std::string &label, const std::string &a,
	       const std::string &b)
{
	const Result *ra = find(a), *rb = find(b);

	if (!ra || !rb)
		return;
	Ratio q {label, ra->avg_ns / rb->avg_ns, ra->p50_ns / rb->p50_ns, "x"};
	if (ra->gid == rb->gid && ra->round_ns.size() == rb->round_ns.size())
		for (size_t r = 0; r < ra->round_ns.size(); r++) {
			double x = ra->round_ns[r] / rb->round_ns[r];

			if (std::isnan(x))
				continue;
			q.rmin = std::isnan(q.rmin) ? x : std::min(q.rmin, x);
			q.rmax = std::isnan(q.rmax) ? x : std::max(q.rmax, x);
		}
	ratios.push_back(q);
}

/* Bandwidth of @name for @bytes per op, in GB/s. */
void add_bandwidth(const std::string &label, const std::string &name,
		   double bytes)
{
	const Result *r = find(name);

	if (!r)
		return;
	Ratio q {label, bytes / r->avg_ns, bytes / r->p50_ns, "GB/s"};
	for (double ns : r->round_ns) {
		double x = bytes / ns;

		if (std::isnan(x))
			continue;
		q.rmin = std::isnan(q.rmin) ? x : std::min(q.rmin, x);
		q.rmax = std::isnan(q.rmax) ? x : std::max(q.rmax, x);
	}
	ratios.push_back(q);
}

/* (time(a) - time(b)) / @d in us: the cost of each of @d extra units. */
void add_slope(const std::string &label, const std::string &a,
	       const std::string &b, double d)
{
	const Result *ra = find(a), *rb = find(b);

	if (!ra || !rb)
		return;
	Ratio q {label, (ra->avg_ns - rb->avg_ns) / d / 1e3,
		 (ra->p50_ns - rb->p50_ns) / d / 1e3, "us"};
	if (ra->gid == rb->gid && ra->round_ns.size() == rb->round_ns.size())
		for (size_t r = 0; r < ra->round_ns.size(); r++) {
			double x = (ra->round_ns[r] - rb->round_ns[r]) / d / 1e3;

			if (std::isnan(x))
				continue;
			q.rmin = std::isnan(q.rmin) ? x : std::min(q.rmin, x);
			q.rmax = std::isnan(q.rmax) ? x : std::max(q.rmax, x);
		}
	ratios.push_back(q);
}

std::vector<Wire> wires;

void print_final()
{
	if (!opt.json) {
		printf("\n%s\n %-54s %9s %9s %9s %9s\n%s\n", rule,
		       "ratios (time a / time b: < 1 means a is faster)",
		       "from avg", "from p50", "rnd min", "rnd max", rule);
		for (const Ratio &q : ratios) {
			printf(" %-54s %9.3f %9.3f", q.name.c_str(), q.avg, q.p50);
			if (std::isnan(q.rmin))
				printf(" %9s %9s", "-", "-");
			else
				printf(" %9.3f %9.3f", q.rmin, q.rmax);
			printf(" %s\n", q.unit.c_str());
		}
		printf("%s\n", rule);
		printf(" rnd min/max: lowest/highest ratio of the per-round means "
		       "(same group only; %u rounds)\n", opt.rounds);
		for (const Wire &w : wires)
			printf(" fabric wire: %-40s %6.2f msgs %8.1f bytes per op\n",
			       w.name.c_str(), w.msgs, w.bytes);
	} else {
		print_json(stdout);
	}
	if (!opt.json_file.empty()) {
		FILE *f = fopen(opt.json_file.c_str(), "w");

		if (!f)
			die_err("open " + opt.json_file, errno);
		print_json(f);
		if (fclose(f) != 0)
			die_err("write " + opt.json_file, errno);
	}
}

} // namespace fbench
