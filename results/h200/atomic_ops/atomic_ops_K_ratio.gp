# written by kvx report: ratio against K, one series per op; each point the median over type (9 values), space (2 values)
set datafile separator ','
set key outside right autotitle columnheader noenhanced
set title 'atomic_ops: time relative to the baseline' noenhanced
set xlabel 'K (log2 scale)' noenhanced
set ylabel 'ratio (x)' noenhanced
set grid
set logscale x 2
set terminal svg size 900,540 dynamic noenhanced
set output 'atomic_ops_K_ratio.svg'
plot for [i=2:14] 'atomic_ops_K_ratio.csv' using 1:i with linespoints title columnheader(i)
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
  set terminal pngcairo size 900,540 noenhanced
} else {
  set terminal png size 900,540
}
set output 'atomic_ops_K_ratio.png'
replot
