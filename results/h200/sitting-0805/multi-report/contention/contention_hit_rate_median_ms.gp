# written by kvx report: median_ms against hit_rate, one series per strategy; each point the median over counter (2 values), n (2 values)
set datafile separator ','
set key outside right autotitle columnheader noenhanced
set title 'contention: median time' noenhanced
set xlabel 'hit_rate' noenhanced
set ylabel 'median time (ms)' noenhanced
set grid
set logscale y
set terminal svg size 900,540 dynamic noenhanced
set output 'contention_hit_rate_median_ms.svg'
plot for [i=2:5] 'contention_hit_rate_median_ms.csv' using 1:i with linespoints title columnheader(i)
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
  set terminal pngcairo size 900,540 noenhanced
} else {
  set terminal png size 900,540
}
set output 'contention_hit_rate_median_ms.png'
replot
