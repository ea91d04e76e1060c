# written by kvx report: ratio against n, one series per width; each point the median over inflight (5 values), resident (4 values), unroll (2 values)
set datafile separator ','
set key outside right autotitle columnheader noenhanced
set title 'read_floor: time relative to the baseline' noenhanced
set xlabel 'n' noenhanced
set ylabel 'ratio (x)' noenhanced
set grid
set terminal svg size 900,540 dynamic noenhanced
set output 'read_floor_n_ratio.svg'
plot for [i=2:3] 'read_floor_n_ratio.csv' using 1:i with linespoints title columnheader(i)
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
  set terminal pngcairo size 900,540 noenhanced
} else {
  set terminal png size 900,540
}
set output 'read_floor_n_ratio.png'
replot
