package termkit

import (
	"fmt"
	"math"
	"regexp"
	"strconv"

	units "github.com/docker/go-units"
)

// Size renders n bytes in IEC units with one decimal: "512 B", "14.0 KiB",
// "3.2 MiB", "100.0 GiB". Below 1 KiB (negative n included) it is the
// exact count. The unit is chosen by go-units' CustomSize (base 1024).
func Size(n int64) string {
	if n < units.KiB {
		return strconv.FormatInt(n, 10) + " B"
	}
	iec := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	return units.CustomSize("%.1f %s", float64(n), 1024, iec)
}

// maxSize is the largest size ParseSize returns: far above any file, and
// safe from overflow in the arithmetic of callers.
const maxSize = 1 << 62

// sizeSyntax is a decimal without sign or exponent, then an optional unit.
var sizeSyntax = regexp.MustCompile(`^\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*$`)

// ParseSize reads a size as people write it: a plain byte count ("0",
// "1048576", "1.5" truncates), or a number with a unit, spaces allowed
// between them: B, K, M, G, T, P, each optionally followed by "B" or "iB",
// in any case ("512K", "256 KiB", "16MB", "16m", "1.5GiB"). Every unit is
// a power of 1024, KB and MB included; the unit table is go-units'
// RAMInBytes. Signs, exponents, Inf, NaN, an empty string, a unit alone
// and values over 2^62 are errors.
func ParseSize(s string) (int64, error) {
	m := sizeSyntax.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("size %q: want a number of bytes, like 1048576, 512K or 16MiB", s)
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: %w", s, err)
	}
	mult := int64(1)
	if m[2] != "" {
		if mult, err = units.RAMInBytes("1" + m[2]); err != nil {
			return 0, fmt.Errorf("size %q: unknown unit %q, want B, KiB, MiB, GiB, TiB or PiB", s, m[2])
		}
	}
	if b := v * float64(mult); b <= maxSize && !math.IsNaN(b) {
		return int64(b), nil
	}
	return 0, fmt.Errorf("size %q: larger than %d bytes", s, int64(maxSize))
}

// Count renders a whole number with a space every three digits: "1 204",
// "-12 345".
func Count(n int64) string {
	s := strconv.FormatInt(n, 10)
	sign := ""
	if s[0] == '-' {
		sign, s = "-", s[1:]
	}
	b := make([]byte, 0, len(s)+len(s)/3)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b = append(b, ' ')
		}
		b = append(b, s[i])
	}
	return sign + string(b)
}
