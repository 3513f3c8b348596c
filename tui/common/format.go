package common

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Age renders how long ago t was: now, 12m, 3h, 5d, 2y.
func Age(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "now"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + "m"
	case d < 24*time.Hour:
		return strconv.Itoa(int(d/time.Hour)) + "h"
	case d < 365*24*time.Hour:
		return strconv.Itoa(int(d/(24*time.Hour))) + "d"
	}
	return strconv.Itoa(int(d/(365*24*time.Hour))) + "y"
}

// IEC renders a size: 512 B, 14.0 KiB, 3.2 MiB.
func IEC(n int64) string {
	if n < 1024 {
		return strconv.FormatInt(n, 10) + " B"
	}
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v := float64(n) / 1024
	i := 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	return fmt.Sprintf("%.1f %s", v, units[i])
}

// Count renders a number with a space every three digits: 1 204.
func Count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// FirstLine is a description's first line.
func FirstLine(p *string) string {
	if p == nil {
		return ""
	}
	line, _, _ := strings.Cut(*p, "\n")
	return line
}

// Deref is a description or "".
func Deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// ShortID cuts a long ID for narrow places: 4f3c2a1e-9b….
func ShortID(id string, n int, ellipsis string) string {
	if len(id) <= n {
		return id
	}
	return id[:n] + ellipsis
}
