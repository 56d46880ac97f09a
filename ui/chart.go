package ui

import (
	"fmt"
	"time"

	"github.com/leasegen/leasegen/runtime"
)

// The overview's chart: a bar per minute of the last hour, its succeeded
// tasks stacked on its failed ones, drawn as inline SVG.
const (
	chartMinutes = 60
	barWidth     = 8
	chartHeight  = 80
)

// chart is the overview's finished-per-minute chart.
type chart struct {
	Width, Height int
	Bars          []bar
	Max           int // the busiest minute's tasks: the chart's full height
	Succeeded     int // over the hour
	Failed        int
	Cancelled     int
	Counted       int    // the minutes counted
	From, To      string // the first and the last minute, as labels
}

// bar is one minute: the failed part at the bottom, the succeeded above.
type bar struct {
	X                  int
	FailedY, FailedH   int
	SuccessY, SuccessH int
	Counted            bool
	Title              string
}

// chartOf lays out the chartMinutes minutes up to now's, which workers
// count only once it ended.
func chartOf(minutes []runtime.ThroughputMinute, now time.Time) chart {
	byMinute := map[int64]runtime.ThroughputMinute{}
	c := chart{Width: chartMinutes * barWidth, Height: chartHeight}
	for _, m := range minutes {
		byMinute[m.Minute.Unix()] = m
		c.Max = max(c.Max, m.Succeeded+m.Failed)
	}
	current := now.UTC().Truncate(time.Minute)
	first := current.Add(-(chartMinutes - 1) * time.Minute)
	c.From, c.To = first.Format("15:04"), current.Format("15:04")+" UTC"
	for i := range chartMinutes {
		at := first.Add(time.Duration(i) * time.Minute)
		m, counted := byMinute[at.Unix()]
		b := bar{X: i * barWidth, Counted: counted, FailedY: chartHeight, SuccessY: chartHeight}
		label := at.Format("15:04") + " UTC"
		if !counted {
			b.Title = label + ": not counted"
			if at.Equal(current) {
				b.Title = label + ": in progress, counted once it ends"
			}
			c.Bars = append(c.Bars, b)
			continue
		}
		c.Counted++
		c.Succeeded, c.Failed, c.Cancelled = c.Succeeded+m.Succeeded, c.Failed+m.Failed, c.Cancelled+m.Cancelled
		if c.Max > 0 {
			b.FailedH = scale(m.Failed, c.Max)
			b.SuccessH = scale(m.Succeeded+m.Failed, c.Max) - b.FailedH
		}
		b.FailedY = chartHeight - b.FailedH
		b.SuccessY = b.FailedY - b.SuccessH
		b.Title = fmt.Sprintf("%s: %d succeeded, %d failed, %d cancelled", label, m.Succeeded, m.Failed, m.Cancelled)
		c.Bars = append(c.Bars, b)
	}
	return c
}

// scale is n's height in pixels when top fills the chart; any task shows.
func scale(n, top int) int {
	if n == 0 {
		return 0
	}
	return max(1, n*chartHeight/top)
}
