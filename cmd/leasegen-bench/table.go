package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// table collects the figures of every run and prints each as the median of
// its runs with their range.
type table struct {
	rows   []*row
	byName map[string]*row
}

// row is one figure: its values, one per run.
type row struct {
	figure string
	unit   string
	values []float64
}

func newTable() *table { return &table{byName: map[string]*row{}} }

// add records one run's value of a figure.
func (t *table) add(figure, unit string, v float64) {
	r, ok := t.byName[figure]
	if !ok {
		r = &row{figure: figure, unit: unit}
		t.rows = append(t.rows, r)
		t.byName[figure] = r
	}
	r.values = append(r.values, v)
}

// median returns the median of a figure's runs.
func (t *table) median(figure string) (float64, bool) {
	r, ok := t.byName[figure]
	if !ok || len(r.values) == 0 {
		return 0, false
	}
	return r.median(), true
}

func (r *row) median() float64 {
	v := slices.Sorted(slices.Values(r.values))
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// print writes the table: figure, unit, median and range.
func (t *table) print(w io.Writer) {
	width := len("figure")
	for _, r := range t.rows {
		width = max(width, len(r.figure))
	}
	fmt.Fprintf(w, "%-*s  %-10s %12s   %s\n", width, "figure", "unit", "median", "range of runs")
	fmt.Fprintln(w, strings.Repeat("-", width+50))
	for _, r := range t.rows {
		lo, hi := slices.Min(r.values), slices.Max(r.values)
		fmt.Fprintf(w, "%-*s  %-10s %12s   %s - %s (%d)\n", width, r.figure, r.unit,
			number(r.median()), number(lo), number(hi), len(r.values))
	}
}

// number formats a figure with thousands separators, or with decimals when
// it is small.
func number(v float64) string {
	switch {
	case v < 10:
		return fmt.Sprintf("%.2f", v)
	case v < 1000:
		return fmt.Sprintf("%.1f", v)
	}
	s := fmt.Sprintf("%.0f", v)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
