// Package cputime reads the CPU time the process has used, for benchmarks that report CPU per
// item next to wall-clock figures: on a shared machine CPU time does not count the time spent
// waiting for a CPU.
package cputime
