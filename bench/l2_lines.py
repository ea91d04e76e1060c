"""l2_lines.py: which 128-byte lines of a block of memory share an L2 slice's
atomic unit, measured by time (docs/measurement.md, "Two-mode cases").

Warps hammer one line or two lines with red.add (every lane adds to its own
word, so one request per warp instruction).  Two lines served by one slice
take as long as twice the requests to one line; two lines on different
slices take about as long as one.  Prints, for lines 0..N-1 of a buffer, the
time ratio t(a,b) / t(a,a) per pair (about 1.0: same slice, about 0.5: not),
the lines grouped by slice, and the largest group: the lines of the block
that the busiest slice serves, which bounds a kernel that spreads its atomics
over those lines.

    python3 bench/l2_lines.py [--lines 8] [--offset BYTES] [--repeat 5]
"""
import argparse
import cupy as cp

SRC = r'''
extern "C" __global__ void hammer(unsigned *base, unsigned a, unsigned b, unsigned iters)
{
    const unsigned warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    unsigned *p = base + ((warp & 1) ? b : a) * 32 + (threadIdx.x & 31);
    for (unsigned i = 0; i < iters; ++i)
        atomicAdd(p, 1u);
}
'''


def timed(kern, buf, a, b, iters, repeat):
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    best = None
    for _ in range(repeat):
        start.record()
        kern((264,), (256,), (buf, cp.uint32(a), cp.uint32(b), cp.uint32(iters)))
        stop.record()
        stop.synchronize()
        ms = cp.cuda.get_elapsed_time(start, stop)
        best = ms if best is None else min(best, ms)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--lines', type=int, default=8)
    ap.add_argument('--offset', type=int, default=0, help='bytes, a multiple of 128')
    ap.add_argument('--iters', type=int, default=64)
    ap.add_argument('--repeat', type=int, default=5)
    args = ap.parse_args()
    kern = cp.RawKernel(SRC, 'hammer')
    raw = cp.zeros(args.offset // 4 + args.lines * 32 + 64, dtype=cp.uint32)
    buf = raw[args.offset // 4:]
    timed(kern, buf, 0, 0, args.iters, 2)
    one = [timed(kern, buf, a, a, args.iters, args.repeat) for a in range(args.lines)]
    ratio = {}
    for a in range(args.lines):
        for b in range(a + 1, args.lines):
            ratio[a, b] = timed(kern, buf, a, b, args.iters, args.repeat) / ((one[a] + one[b]) / 2)
    print(f'# device {cp.cuda.runtime.getDeviceProperties(0)["name"].decode()}, '
          f'offset {args.offset} B, one line: {min(one):.3f} .. {max(one):.3f} ms')
    print('pair ratios t(a,b)/t(a,a):')
    for a in range(args.lines):
        print(f'{a:3d} ' + ' '.join(f'{ratio[min(a, b), max(a, b)]:5.2f}' if a != b else '  -  '
                                    for b in range(args.lines)))
    group = list(range(args.lines))
    def find(x):
        while group[x] != x:
            x = group[x]
        return x
    for (a, b), r in ratio.items():
        if r > 0.75:
            group[find(b)] = find(a)
    groups = {}
    for a in range(args.lines):
        groups.setdefault(find(a), []).append(a)
    print('lines by slice:', sorted(groups.values()))
    print(f'largest group: {max(len(g) for g in groups.values())} of {args.lines} lines')


if __name__ == '__main__':
    main()
