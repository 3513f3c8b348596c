package termkit

import (
	"strconv"
	"time"
)

// Age renders how long before now t was, in its largest whole unit: "now"
// (under a minute, or t after now), "12m", "3h", "5d", "2y" (a year is 365
// days). It is plain arithmetic on time.Duration; no library fits this
// compact form.
func Age(now, t time.Time) string {
	const day, year = 24 * time.Hour, 365 * 24 * time.Hour
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "now"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + "m"
	case d < day:
		return strconv.Itoa(int(d/time.Hour)) + "h"
	case d < year:
		return strconv.Itoa(int(d/day)) + "d"
	}
	return strconv.Itoa(int(d/year)) + "y"
}

// Stamp renders t exactly, in UTC to the second, with its Age:
// "2026-08-14 15:27:00 UTC (3h ago)", or "… (now)" under a minute. The
// layout is the standard library's time.Format.
func Stamp(now, t time.Time) string {
	when := Age(now, t)
	if when != "now" {
		when += " ago"
	}
	return t.UTC().Format("2006-01-02 15:04:05 MST") + " (" + when + ")"
}
