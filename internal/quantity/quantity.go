// Package quantity reads a volume size as the CLI and the TUI accept it: a
// plain byte count or a Kubernetes quantity (10Gi, 500M), parsed by
// Kubernetes' own rules so a size reads the same as in the server's
// kubernetes.volumeSize.
package quantity

import (
	"fmt"
	"math"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Bytes parses s as a whole, positive number of bytes: "1073741824",
// "10Gi", "1.5Gi", "500M". A fraction of a byte ("100m", "0.5"), zero, a
// negative size or text that is not a quantity is an error.
func Bytes(s string) (int64, error) {
	q, err := resource.ParseQuantity(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("%q is not a size: want bytes or a quantity such as 10Gi or 500M", s)
	}
	if q.Sign() <= 0 {
		return 0, fmt.Errorf("%q is not a positive size", s)
	}
	if q.Cmp(clamped) >= 0 {
		return 0, fmt.Errorf("%q is too large a size", s)
	}
	// Value rounds a fraction up; a size that reads back different had one.
	n := q.Value()
	if whole := resource.NewQuantity(n, resource.DecimalSI); whole.Cmp(q) != 0 {
		return 0, fmt.Errorf("%q is not a whole number of bytes", s)
	}
	return n, nil
}

// clamped is what a quantity too large for an int64 parses as.
var clamped = *resource.NewQuantity(math.MaxInt64, resource.DecimalSI)
