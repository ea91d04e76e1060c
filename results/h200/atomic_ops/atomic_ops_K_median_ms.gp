# written by kvx report: median_ms against K, one series per op; each point the median over type (9 values), space (2 values)
set datafile separator ','
set key outside right autotitle columnheader noenhanced
set title 'atomic_ops: median time' noenhanced
set xlabel 'K (log2 scale)' noenhanced
set ylabel 'median time (ms)' noenhanced
set grid
set logscale x 2
set logscale y
set terminal svg size 900,540 dynamic noenhanced
set output 'atomic_ops_K_median_ms.svg'
plot for [i=2:14] 'atomic_ops_K_median_ms.csv' using 1:i with linespoints title columnheader(i)
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
  set terminal pngcairo size 900,540 noenhanced
} else {
  set terminal png size 900,540
}
set output 'atomic_ops_K_median_ms.png'
replot
