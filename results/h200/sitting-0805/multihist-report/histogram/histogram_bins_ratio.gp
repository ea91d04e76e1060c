# written by kvx report: ratio against bins, one series per strategy; each point the median over dist (5 values), size (2 values)
set datafile separator ','
set key outside right autotitle columnheader noenhanced
set title 'histogram: time relative to the baseline' noenhanced
set xlabel 'bins (log2 scale)' noenhanced
set ylabel 'ratio (x)' noenhanced
set grid
set logscale x 2
set logscale y
set terminal svg size 900,540 dynamic noenhanced
set output 'histogram_bins_ratio.svg'
plot for [i=2:4] 'histogram_bins_ratio.csv' using 1:i with linespoints title columnheader(i)
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
  set terminal pngcairo size 900,540 noenhanced
} else {
  set terminal png size 900,540
}
set output 'histogram_bins_ratio.png'
replot
