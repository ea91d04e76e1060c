/* peers: kvx-peers, the library call a user would otherwise write, timed on
 * exactly kvx's inputs the way kvx times a variant, written as a CSV that
 * `kvx import` reads as a reference (docs/peers.md).
 *
 *   kvx-peers SPEC [--where EXPR] [--out FILE.csv] [settings]   time on the GPU
 *   kvx-peers SPEC --list [--where EXPR] [--arch sm_90]          no GPU: what would run
 *
 * A family of peers stands for each host reference a spec's check may name
 * (the output a peer must reproduce, compared with kvx's own reference):
 *   histogram(in, bins, lo, hi)   cub_even:  cub::DeviceHistogram::HistogramEven,
 *                                            levels lo, lo + width, .. lo + bins * width
 *                                 cub_range: cub::DeviceHistogram::HistogramRange,
 *                                            levels min(lo + b * width, hi + 1)
 *                                 (width = ceil((hi - lo + 1) / bins), histogram()'s);
 *                                 HistogramEven counts values in hi+1 .. upper-1 into
 *                                 the last bin, which histogram() ignores: --list says
 *                                 whether the input has any, verification catches them
 *   count_below(in, thr), count_below_by(in, thr, keys, 1)
 *                                 thrust_count_if: thrust::count_if(in[i] < thr), the
 *                                            count returned to the host (its sync
 *                                            and copy are part of the call)
 *                                 cub_reduce: cub::DeviceReduce::Sum over in[i] < thr
 *                                            as the output's type, into device memory
 * Inputs, points and references come from kvx itself (peer.h); the families
 * only turn a row's check into library arguments.
 *
 * A sample is kvx's, and so are the warm-ups, batches, stopping rule and
 * statistics (peers_gpu.cu times a call).  Rows are visited in the order of
 * their input's key, so each distinct input (kvx's input key) is generated
 * and uploaded once. */
#include "peers_gpu.h"

#include <cub/version.cuh>
#include <thrust/version.h>

#include <cuda_runtime.h>

#include <getopt.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

namespace {

/* ---- the families ------------------------------------------------------------------ */

struct PeerDef {
    const char *name;   /* the row's value of the baseline axis */
    Kind kind;
};

struct Family {
    const char *ref;    /* the check's reference function */
    const char *spec;   /* nullptr: any spec */
    const char *filter; /* the spec's points a peer stands beside; nullptr: all */
    PeerDef peers[2];
};

/* contention: at one counter, address=runtime adds every hit to out[addr[i]]
 * with addr all 0; a library count reads no addr, so the address=const rows
 * stand for both (and the import has no duplicate measurement). */
const Family families[] = {
    {"histogram", nullptr, nullptr, {{"cub_even", Kind::hist_even}, {"cub_range", Kind::hist_range}}},
    {"count_below_by", "contention", "address == \"const\"",
     {{"thrust_count_if", Kind::thrust_count}, {"cub_reduce", Kind::cub_reduce}}},
    {"count_below_by", nullptr, nullptr, {{"thrust_count_if", Kind::thrust_count}, {"cub_reduce", Kind::cub_reduce}}},
    {"count_below", nullptr, nullptr, {{"thrust_count_if", Kind::thrust_count}, {"cub_reduce", Kind::cub_reduce}}},
};

const Family *family_for(const char *ref, const char *spec)
{
    for (const Family &f : families)
        if (!strcmp(f.ref, ref) && (!f.spec || !strcmp(f.spec, spec)))
            return &f;
    return nullptr;
}


bool int_arg(const PeerCheck &c, int j, int64_t *v)
{
    if (j >= c.nargs || c.args[j].buf || !c.args[j].is_int)
        return false;
    *v = c.args[j].i;
    return true;
}

int64_t type_max(const PeerInput &in)
{
    if (in.is_float)
        return 0;
    int bits = 8 * in.size - (in.is_signed ? 1 : 0);
    return bits >= 63 ? INT64_MAX : (int64_t(1) << bits) - 1;
}

/* The row's arguments, or why it has none. */
void row_plan(PeerSet *s, int row, RowPlan &p)
{
    p.row = row;
    peer_check(s, row, &p.chk);
    const PeerCheck &c = p.chk;
    if (c.nargs < 1 || !c.args[0].buf || peer_input(s, row, c.args[0].buf, &p.in) != 0) {
        p.skip = "the check's first argument is not an input buffer";
        return;
    }
    const std::string type = p.in.type, out = c.out_type;
    if (p.in.count > (uint64_t)INT_MAX) {
        p.skip = "more than 2^31 - 1 elements (the calls take an int count)";
        return;
    }
    if (!strcmp(c.ref, "histogram")) {
        if (type != "u8" && type != "u16") {
            p.skip = "histogram input of type " + type + " (the peers take u8 and u16)";
            return;
        }
        if (out != "u32") {
            p.skip = "histogram output of type " + out + " (the peers count in u32)";
            return;
        }
        int_arg(c, 1, &p.bins), int_arg(c, 2, &p.lo), int_arg(c, 3, &p.hi);
        /* histogram(): values lo .. hi in bins of ceil((hi - lo + 1) / bins) (core/refs.c) */
        p.width = (p.hi - p.lo + 1 + p.bins - 1) / p.bins;
        p.lower = p.lo;
        p.upper = p.lo + p.bins * p.width;
        if (p.lo < 0 || p.upper - 1 > INT_MAX) {
            p.skip = "levels outside 0 .. 2^31 - 1";
            return;
        }
        p.levels.resize(size_t(p.bins) + 1);
        for (int64_t b = 0; b <= p.bins; b++)
            p.levels[size_t(b)] = (long long)std::min(p.lo + b * p.width, p.hi + 1);
        /* Byte samples take CUB's 256-bin path whatever the level type; wider
         * ones bin in the common type of level and sample, 32-bit arithmetic
         * when the levels are of the sample's own type. */
        p.narrow = p.in.size > 1 && p.upper <= type_max(p.in);
        return;
    }
    int64_t k = 1;
    if (!strcmp(c.ref, "count_below_by") && (!int_arg(c, 3, &k) || k != 1)) {
        p.skip = "more than one counter (a library count makes one)";
        return;
    }
    if (type != "i32") {
        p.skip = "count input of type " + type + " (the peers take i32)";
        return;
    }
    if (out != "u32" && out != "u64") {
        p.skip = "count output of type " + out + " (the peers count in u32 and u64)";
        return;
    }
    if (!int_arg(c, 1, &p.thr) || p.thr < INT_MIN || p.thr > INT_MAX) {
        p.skip = "a threshold that is not a 32-bit integer";
        return;
    }
}

std::string levels_text(const RowPlan &p, Kind k)
{
    char b[160];
    if (k == Kind::hist_even) {
        snprintf(b, sizeof b, "even:%lld:%lld:%lld:%s", (long long)p.lower, (long long)p.upper,
                 (long long)p.bins + 1, p.narrow ? p.in.type : "int");
        return b;
    }
    if (k == Kind::hist_range) {
        std::string t = "range:";
        for (size_t i = 0; i < p.levels.size(); i++)
            t += (i ? "," : "") + std::to_string(p.levels[i]);
        return t + ":" + (p.narrow ? p.in.type : "int");
    }
    snprintf(b, sizeof b, "below:%lld:%s", (long long)p.thr, p.chk.out_type);
    return b;
}

/* ---- the host's view of a call: what it would count on this input -------------------- */

template <typename S>
void host_hist(const S *d, uint64_t n, const RowPlan &p, Kind k, std::vector<uint32_t> &h)
{
    h.assign(size_t(p.bins), 0);
    for (uint64_t i = 0; i < n; i++) {
        const int64_t v = d[i];
        if (k == Kind::hist_even) {
            /* CUB's integer even binning: (v - lower) * bins / (upper - lower) */
            if (v >= p.lower && v < p.upper)
                h[size_t((v - p.lower) * p.bins / (p.upper - p.lower))]++;
        } else if (v >= p.levels.front() && v < p.levels.back()) {
            /* CUB's range binning: the last level not above v */
            h[size_t(std::upper_bound(p.levels.begin(), p.levels.end(), (long long)v) - p.levels.begin() - 1)]++;
        }
    }
}

/* What the call would produce here, compared with kvx's reference: "ok" or
 * "mismatch: ...". */
std::string host_check(PeerSet *s, const RowPlan &p, Kind k)
{
    char detail[512] = "";
    int v;
    const uint64_t n = p.in.count;
    if (k == Kind::hist_even || k == Kind::hist_range) {
        std::vector<uint32_t> h;
        if (p.in.size == 1)
            host_hist((const uint8_t *)p.in.data, n, p, k, h);
        else
            host_hist((const uint16_t *)p.in.data, n, p, k, h);
        v = peer_verify(s, p.row, h.data(), detail, sizeof detail);
    } else {
        const int32_t *d = (const int32_t *)p.in.data;
        uint64_t count = 0;
        for (uint64_t i = 0; i < n; i++)
            count += d[i] < p.thr;
        uint64_t out64 = count;
        uint32_t out32 = uint32_t(count);
        v = peer_verify(s, p.row, p.chk.out_size == 4 ? (const void *)&out32 : (const void *)&out64, detail,
                        sizeof detail);
    }
    return v == 1 ? "ok" : std::string("mismatch: ") + detail;
}

/* ---- options ---------------------------------------------------------------------------- */

struct Opts {
    const char *spec = nullptr, *where = nullptr, *out = nullptr, *arch = nullptr;
    int list = 0, device = 0;
    PeerOptions po{};
    std::string command;
};

void usage(FILE *f)
{
    fputs("usage: kvx-peers SPEC [--where EXPR] [--out FILE.csv] [--device N]\n"
          "                 [--warmup N] [--samples N] [--min-samples N] [--max-samples N]\n"
          "                 [--noise X] [--budget-ms MS] [--flush-l2 read|write|false] [--seed N] [-j N]\n"
          "       kvx-peers SPEC --list [--where EXPR] [--arch sm_90] [--seed N] [-j N]\n"
          "Times the library call that stands beside SPEC's variants (CUB's histograms for\n"
          "histogram(), thrust::count_if and cub::DeviceReduce::Sum for count_below()) on\n"
          "kvx's inputs, verified against kvx's reference, as kvx times a variant; writes a\n"
          "CSV for `kvx import FILE.csv --name NAME --spec SPECNAME` (stdout without --out).\n"
          "Settings default to the spec's measure:.  --samples N takes exactly N samples\n"
          "(within the budget).  --list needs no GPU: each row's levels, input key, input\n"
          "hash and what the call would count on that input, against kvx's reference.\n",
          f);
}

bool parse_num(const char *s, double lo, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return *s && !*end && errno == 0 && std::isfinite(*v) && *v >= lo;
}

bool parse_count(const char *s, long long lo, long long *v)
{
    char *end;
    errno = 0;
    if (*s == '-' || *s == '+')
        return false;
    unsigned long long x = strtoull(s, &end, 10);
    if (!*s || *end || errno || x > (unsigned long long)LLONG_MAX)
        return false;
    *v = (long long)x;
    return *v >= lo;
}

std::string shell_quote(const char *a)
{
    if (*a && strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+") == strlen(a))
        return a;
    std::string q = "'";
    for (const char *p = a; *p; p++)
        q += *p == '\'' ? std::string("'\\''") : std::string(1, *p);
    return q + "'";
}

int parse_opts(int argc, char **argv, Opts &o)
{
    enum { O_WHERE = 256, O_OUT, O_LIST, O_ARCH, O_DEVICE, O_WARMUP, O_SAMPLES, O_MIN, O_MAX, O_NOISE, O_BUDGET,
           O_FLUSH, O_SEED };
    static const option opts[] = {
        {"where", required_argument, nullptr, O_WHERE},   {"out", required_argument, nullptr, O_OUT},
        {"list", no_argument, nullptr, O_LIST},           {"arch", required_argument, nullptr, O_ARCH},
        {"device", required_argument, nullptr, O_DEVICE}, {"warmup", required_argument, nullptr, O_WARMUP},
        {"samples", required_argument, nullptr, O_SAMPLES}, {"min-samples", required_argument, nullptr, O_MIN},
        {"max-samples", required_argument, nullptr, O_MAX}, {"noise", required_argument, nullptr, O_NOISE},
        {"budget-ms", required_argument, nullptr, O_BUDGET}, {"flush-l2", required_argument, nullptr, O_FLUSH},
        {"seed", required_argument, nullptr, O_SEED},     {"help", no_argument, nullptr, 'h'},
        {nullptr, 0, nullptr, 0}};
    PeerOptions &p = o.po;
    p.warmup = p.min_samples = p.max_samples = p.flush_l2 = -1;
    p.noise = p.budget_ms = -1;
    for (int i = 0; i < argc; i++)
        o.command += (i ? " " : "") + shell_quote(i ? argv[i] : "kvx-peers");
    opterr = 0;
    int c, li = -1;
    while ((c = getopt_long(argc, argv, ":j:h", opts, &li)) != -1) {
        long long n = 0;
        double d = 0;
        const char *a = optarg;
        bool ok = true;
        switch (c) {
        case 'h': usage(stdout); exit(0);
        case O_WHERE: o.where = a; break;
        case O_OUT: o.out = a; break;
        case O_LIST: o.list = 1; break;
        case O_ARCH: o.arch = a; break;
        case O_DEVICE: ok = parse_count(a, 0, &n) && n <= INT_MAX, o.device = int(n); break;
        case O_WARMUP: ok = parse_count(a, 0, &n) && n <= INT_MAX, p.warmup = int(n); break;
        case O_SAMPLES:
            ok = parse_count(a, 1, &n) && n <= INT_MAX, p.min_samples = p.max_samples = int(n);
            break;
        case O_MIN: ok = parse_count(a, 1, &n) && n <= INT_MAX, p.min_samples = int(n); break;
        case O_MAX: ok = parse_count(a, 1, &n) && n <= INT_MAX, p.max_samples = int(n); break;
        case O_NOISE: ok = parse_num(a, 0, &d), p.noise = d; break;
        case O_BUDGET: ok = parse_num(a, 0, &d), p.budget_ms = d; break;
        case O_FLUSH:
            p.flush_l2 = !strcmp(a, "read") ? PEER_FLUSH_READ : !strcmp(a, "write") ? PEER_FLUSH_WRITE
                         : !strcmp(a, "false") || !strcmp(a, "off") ? PEER_FLUSH_OFF : -2;
            ok = p.flush_l2 != -2;
            break;
        case O_SEED: ok = parse_count(a, 0, &n), p.seed = uint64_t(n), p.set_seed = 1; break;
        case 'j': ok = parse_count(a, 1, &n) && n <= 4096, p.threads = int(n); break;
        case ':': fprintf(stderr, "kvx-peers: option '%s' needs a value\n", argv[optind - 1]); return 2;
        default: fprintf(stderr, "kvx-peers: unknown option '%s'\n", argv[optind - 1]); usage(stderr); return 2;
        }
        if (!ok) {
            fprintf(stderr, "kvx-peers: %s%s is '%s' (expected %s)\n", c == 'j' ? "-" : "--",
                    c == 'j' ? "j" : opts[li].name, a,
                    c == O_NOISE || c == O_BUDGET ? "a number >= 0"
                    : c == O_FLUSH               ? "read, write or false"
                    : c == O_WARMUP || c == O_SEED || c == O_DEVICE ? "a whole number >= 0"
                                                                     : "a whole number >= 1");
            return 2;
        }
        li = -1;
    }
    if (optind != argc - 1) {
        fprintf(stderr, "kvx-peers: expected one SPEC file, got %d arguments\n", argc - optind);
        usage(stderr);
        return 2;
    }
    o.spec = argv[optind];
    o.po.spec_path = o.spec;
    o.po.arch = o.arch;
    return 0;
}

/* ---- output ------------------------------------------------------------------------------- */

std::string num(double v)
{
    if (std::isnan(v))
        return "";
    char b[40];
    snprintf(b, sizeof b, "%.9g", v);
    return b;
}

std::string utc_now()
{
    char b[32];
    time_t t = time(nullptr);
    strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    return b;
}

struct Measured {
    int row;
    const PeerDef *peer;
    Result r;
};

/* The CSV: a comment naming the GPU, date, library versions and command;
 * axis columns (the baseline axes carry the peer's name) and kvx import's
 * value columns. */
void write_csv(FILE *f, PeerSet *s, const Gpu &g, const Opts &o, const std::vector<Measured> &ms)
{
    PeerMeasure m;
    peer_measure(s, &m);
    int rt = 0, dv = 0;
    cudaRuntimeGetVersion(&rt);
    if (!o.list)
        cudaDriverGetVersion(&dv);
    const double peak = peer_peak_gbs(&g.dev);
    char gpu[512];
    if (o.list)
        snprintf(gpu, sizeof gpu, "none (--list: not measured; planned for %s)", peer_facts(s));
    else
        snprintf(gpu, sizeof gpu, "%s (sm_%d%d, %d SMs, L2 %.0f MiB, peak %.1f GB/s)", g.dev.name, g.dev.cc_major,
                 g.dev.cc_minor, g.dev.sm_count, g.dev.l2_bytes / 1048576.0, peak);
    fprintf(f, "# kvx-peers: GPU %s; %s; CUB %d.%d.%d (CUB_VERSION %d), Thrust %d.%d.%d; CUDA runtime %d, driver %d; "
            "command: %s\n",
            gpu, utc_now().c_str(), CUB_MAJOR_VERSION, CUB_MINOR_VERSION, CUB_SUBMINOR_VERSION, CUB_VERSION,
            THRUST_MAJOR_VERSION, THRUST_MINOR_VERSION, THRUST_SUBMINOR_VERSION, rt, dv, o.command.c_str());
    fprintf(f, "# measure: warmup %d, warmup_ms %g, samples %d..%d, noise %g, budget_ms %g, flush_l2 %s, seed %llu, "
            "sample_batch %d (spec %s, kvx's rules)\n",
            m.warmup, m.warmup_ms, m.min_samples, m.max_samples, m.noise, m.budget_ms,
            m.flush_l2 == PEER_FLUSH_READ ? "read" : m.flush_l2 == PEER_FLUSH_WRITE ? "write" : "false",
            (unsigned long long)m.seed, m.sample_batch, peer_spec_name(s));
    for (int a = 0; a < peer_naxes(s); a++)
        fprintf(f, "%s,", peer_axis_name(s, a));
    fputs("median_ms,min_ms,max_ms,mean_ms,stdev_ms,noise,bytes,atomics,elements,gbs,pct_peak,elems_per_s,"
          "atomics_per_s,status\n",
          f);
    for (const Measured &x : ms) {
        bool named = false;
        for (int a = 0; a < peer_naxes(s); a++) {
            /* The first baseline axis takes the peer's name; any further one keeps the row's value. */
            const bool here = peer_axis_choice(s, a) && !named;
            named |= here;
            fprintf(f, "%s,", here ? x.peer->name : peer_axis_value(s, x.row, a));
        }
        const PeerStats &st = x.r.st;
        const bool timed = st.samples > 0;
        const double sec = st.median_ms / 1e3;
        const double bytes = peer_metric(s, x.row, PEER_BYTES), atomics = peer_metric(s, x.row, PEER_ATOMICS),
                     elems = peer_metric(s, x.row, PEER_ELEMENTS);
        const double gbs = timed ? bytes / sec / 1e9 : NAN;
        fprintf(f, "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", num(timed ? st.median_ms : NAN).c_str(),
                num(timed ? st.min_ms : NAN).c_str(), num(timed ? st.max_ms : NAN).c_str(),
                num(timed ? st.mean_ms : NAN).c_str(), num(timed ? st.stdev_ms : NAN).c_str(),
                num(timed ? st.noise : NAN).c_str(), num(bytes).c_str(), num(atomics).c_str(), num(elems).c_str(),
                num(gbs).c_str(), num(timed && peak > 0 ? gbs / peak * 100 : NAN).c_str(),
                num(timed ? elems / sec : NAN).c_str(), num(timed ? atomics / sec : NAN).c_str(), x.r.status.c_str());
    }
}

/* Rows in the order of their inputs' keys (stable), so that rows sharing an
 * input follow each other and it is generated and uploaded once. */
std::vector<int> input_order(const std::vector<RowPlan> &plans)
{
    std::vector<int> order;
    for (const RowPlan &p : plans)
        if (p.skip.empty())
            order.push_back(p.row);
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return strcmp(plans[size_t(a)].in.key, plans[size_t(b)].in.key) < 0; });
    return order;
}

/* Rows without a peer: one line with the count and the first. */
void note_skips(const std::vector<RowPlan> &plans, PeerSet *s)
{
    int n = 0;
    const RowPlan *first = nullptr;
    for (const RowPlan &p : plans)
        if (!p.skip.empty())
            first = first ? first : &p, n++;
    if (n)
        fprintf(stderr, "kvx-peers: %d of %zu rows have no peer: %s (first: %s)\n", n, plans.size(),
                first->skip.c_str(), peer_label(s, first->row));
}

/* The CSV a timed run would write, its rows not measured (status skipped): the
 * axis columns and metrics, for checking what `kvx import` makes of them. */
int write_out(PeerSet *s, const Gpu &g, const Opts &o, const std::vector<Measured> &ms)
{
    /* Published by rename: a half-written file is never imported. */
    std::string tmp = o.out ? std::string(o.out) + ".tmp" : "";
    FILE *f = o.out ? fopen(tmp.c_str(), "w") : stdout;
    if (!f) {
        fprintf(stderr, "kvx-peers: cannot write '%s': %s\n", tmp.c_str(), strerror(errno));
        return 3;
    }
    write_csv(f, s, g, o, ms);
    if (o.out && (fclose(f) != 0 || rename(tmp.c_str(), o.out) != 0)) {
        fprintf(stderr, "kvx-peers: cannot write '%s': %s\n", o.out, strerror(errno));
        return 3;
    }
    return 0;
}

int list_rows(PeerSet *s, const Family &fam, std::vector<RowPlan> &plans, const Opts &o)
{
    char err[2048];
    std::vector<std::string> lines(plans.size());
    for (int r : input_order(plans)) {
        RowPlan &p = plans[size_t(r)];
        if (peer_prepare(s, r, err, sizeof err) != 0) {
            fprintf(stderr, "kvx-peers: %s (at %s)\n", err, peer_label(s, r));
            return 2;
        }
        peer_input(s, r, p.in.name, &p.in);
        char hash[32];
        snprintf(hash, sizeof hash, "%016llx", (unsigned long long)peer_input_hash(s, r, p.in.name));
        for (const PeerDef &d : fam.peers)
            lines[size_t(r)] += std::to_string(r) + "\t" + peer_label(s, r) + "\t" + d.name + "\t" +
                                levels_text(p, d.kind) + "\t" + p.in.name + "\t" + p.in.type + "\t" +
                                std::to_string(p.in.count) + "\t" + p.in.key + "\t" + hash + "\t" + p.in.init + "\t" +
                                host_check(s, p, d.kind) + "\n";
    }
    printf("# kvx-peers --list %s (%s): %s; check %s; seed %llu\n", o.spec, peer_spec_name(s), peer_facts(s),
           peer_check_ref(s), [&] { PeerMeasure m; peer_measure(s, &m); return (unsigned long long)m.seed; }());
    printf("row\tpoint\tpeer\tlevels\tinput\ttype\tcount\tkey\thash\tinit\thost\n");
    int rows = 0;
    for (const std::string &l : lines)
        if (!l.empty())
            fputs(l.c_str(), stdout), rows++;
    std::vector<std::string> keys;
    for (const RowPlan &p : plans)
        if (p.skip.empty() && std::find(keys.begin(), keys.end(), p.in.key) == keys.end())
            keys.push_back(p.in.key);
    printf("# %d rows, %zu distinct inputs of the calls (%d input buffers generated)\n", rows, keys.size(),
           peer_generated(s));
    if (!o.out)
        return 0;
    std::vector<Measured> ms;
    for (const RowPlan &p : plans)
        for (const PeerDef &d : fam.peers)
            if (p.skip.empty()) {
                ms.push_back(Measured{p.row, &d, Result()});
                ms.back().r.status = "skipped";
            }
    return write_out(s, Gpu(), o, ms);
}

int time_rows(PeerSet *s, const Family &fam, std::vector<RowPlan> &plans, Gpu &g, const Opts &o)
{
    char err[2048];
    PeerMeasure m;
    peer_measure(s, &m);
    if (!flush_prepare(g, m.flush_l2)) {
        fprintf(stderr, "kvx-peers: the L2 flush: %s\n", cuda_err.c_str());
        return 1;
    }
    std::vector<Measured> ms;
    int bad = 0;
    for (int r : input_order(plans)) {
        RowPlan &p = plans[size_t(r)];
        if (peer_prepare(s, r, err, sizeof err) != 0) {
            fprintf(stderr, "kvx-peers: %s (at %s)\n", err, peer_label(s, r));
            return 2;
        }
        peer_input(s, r, p.in.name, &p.in);
        if (!input_upload(g, p.in)) {
            fprintf(stderr, "kvx-peers: input '%s' at %s: %s\n", p.in.name, peer_label(s, r), cuda_err.c_str());
            return 1;
        }
        for (const PeerDef &d : fam.peers) {
            Measured x{r, &d, Result()};
            if (!measure_call(s, g, d.kind, p, x.r)) {
                x.r = Result();
                x.r.status = "launch_error";
                x.r.detail = cuda_err;
                /* A sticky error leaves the context unusable: stop, as a worker
                 * would; another is cleared and the next call goes on. */
                cudaGetLastError();
                cudaError_t e = cudaDeviceSynchronize();
                if (e != cudaSuccess) {
                    fprintf(stderr, "kvx-peers: %s at %s: %s; the context is lost (%s)\n", d.name, peer_label(s, r),
                            cuda_err.c_str(), cudaGetErrorName(e));
                    return 1;
                }
            }
            bad += x.r.status != "ok";
            fprintf(stderr, "%-16s %-60s %-10s %10.4f ms  %3d samples  noise %-8s%s%s\n", d.name, peer_label(s, r),
                    x.r.status.c_str(), x.r.st.median_ms, x.r.st.samples, num(x.r.st.noise).c_str(),
                    x.r.detail.empty() ? "" : "  ", x.r.detail.c_str());
            ms.push_back(x);
        }
    }
    std::stable_sort(ms.begin(), ms.end(), [](const Measured &a, const Measured &b) { return a.row < b.row; });
    if (int rc = write_out(s, g, o, ms))
        return rc;
    fprintf(stderr, "kvx-peers: %zu calls timed at %zu rows, %d not ok; %d input buffers generated%s%s\n", ms.size(),
            input_order(plans).size(), bad, peer_generated(s), o.out ? "; written to " : "", o.out ? o.out : "");
    return bad ? 1 : 0;
}

} // namespace

int main(int argc, char **argv)
{
    Opts o;
    int rc = parse_opts(argc, argv, o);
    if (rc)
        return rc;
    Gpu g;
    if (!o.list) {
        int n = 0;
        cudaError_t e = cudaGetDeviceCount(&n);
        if (e != cudaSuccess || n == 0) {
            fprintf(stderr, "kvx-peers: no GPU (%s): timing needs one; --list works without\n",
                    e != cudaSuccess ? cudaGetErrorString(e) : "the runtime counts none");
            return 1;
        }
        if (o.device >= n) {
            fprintf(stderr, "kvx-peers: --device %d, but there are %d GPUs\n", o.device, n);
            return 2;
        }
        if (!gpu_open(g, o.device)) {
            fprintf(stderr, "kvx-peers: %s\n", cuda_err.c_str());
            return 1;
        }
        o.po.device = &g.dev;
    }
    char err[2048];
    PeerSet *s = peer_open(&o.po, err, sizeof err);
    if (!s) {
        fprintf(stderr, "kvx-peers: %s\n", err);
        gpu_close(g);
        return 2;
    }
    const Family *fam = family_for(peer_check_ref(s), peer_spec_name(s));
    if (!fam) {
        const char *ref = peer_check_ref(s);
        fprintf(stderr, "kvx-peers: %s: no peer for %s%s%s (peers stand beside histogram(...), count_below(...) "
                "and count_below_by(..., 1))\n", o.spec, *ref ? "a check of '" : "a first check that is no host "
                "reference call", ref, *ref ? "'" : "");
        rc = 2;
    } else if (peer_select(s, o.where, fam->filter, err, sizeof err) < 0) {
        fprintf(stderr, "kvx-peers: %s\n", err);
        rc = 2;
    } else {
        std::vector<RowPlan> plans(size_t(peer_rows(s)));
        for (int r = 0; r < peer_rows(s); r++)
            row_plan(s, r, plans[size_t(r)]);
        note_skips(plans, s);
        if (input_order(plans).empty()) {
            fprintf(stderr, "kvx-peers: no row to measure%s%s%s\n", fam->filter ? " (the peers stand beside the "
                    "points where " : "", fam->filter ? fam->filter : "", fam->filter ? ")" : "");
            rc = 2;
        } else {
            rc = o.list ? list_rows(s, *fam, plans, o) : time_rows(s, *fam, plans, g, o);
        }
    }
    peer_close(s);
    gpu_close(g);
    return rc;
}
