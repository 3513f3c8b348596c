package quantity_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/quantity"
)

func TestBytes(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{
		"1":          1,
		"1073741824": 1 << 30,
		"10Gi":       10 << 30,
		"1.5Gi":      3 << 29,
		"512Mi":      512 << 20,
		"500M":       500_000_000,
		"2k":         2000,
		" 1Ti ":      1 << 40,
		"1e3":        1000,
		"7Ei":        7 << 60,
	} {
		got, err := quantity.Bytes(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "big", "10GB", "0", "-1Gi", "100m", "0.5", "1.5", "Gi", "9Ei", "1e30"} {
		_, err := quantity.Bytes(in)
		require.Error(t, err, in)
	}
}
