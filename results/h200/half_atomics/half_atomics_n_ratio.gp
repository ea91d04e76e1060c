# written by kvx report: ratio against n, one series per elem; each point the median over packing (6 values), contention (4 values), inc (2 values), offset (2 values)
set datafile separator ','
set key outside right autotitle columnheader noenhanced
set title 'half_atomics: time relative to the baseline' noenhanced
set xlabel 'n' noenhanced
set ylabel 'ratio (x)' noenhanced
set grid
set logscale y
set terminal svg size 900,540 dynamic noenhanced
set output 'half_atomics_n_ratio.svg'
plot for [i=2:5] 'half_atomics_n_ratio.csv' using 1:i with linespoints title columnheader(i)
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
  set terminal pngcairo size 900,540 noenhanced
} else {
  set terminal png size 900,540
}
set output 'half_atomics_n_ratio.png'
replot
