package termkit_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/termkit"
)

func TestSize(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   int64
		want string
	}{
		{0, "0 B"},
		{512, "512 B"},
		{1023, "1023 B"},
		{-5, "-5 B"},
		{1024, "1.0 KiB"},
		{14 << 10, "14.0 KiB"},
		{3_400_000, "3.2 MiB"},
		{100 << 20, "100.0 MiB"},
		{1<<20 - 1, "1024.0 KiB"},
		{12 << 30, "12.0 GiB"},
		{5 << 40, "5.0 TiB"},
		{3 << 50, "3.0 PiB"},
		{1<<63 - 1, "8.0 EiB"},
	}
	for _, c := range cases {
		require.Equal(t, c.want, termkit.Size(c.in), "%d", c.in)
	}
}

func TestParseSize(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want int64
	}{
		{"0", 0},
		{"512", 512},
		{"1048576", 1 << 20},
		{"1.5", 1},
		{"512B", 512},
		{"512K", 512 << 10},
		{"512k", 512 << 10},
		{"16KiB", 16 << 10},
		{"256 KiB", 256 << 10},
		{"256KB", 256 << 10},
		{"16MiB", 16 << 20},
		{"16MB", 16 << 20},
		{"16m", 16 << 20},
		{"16mib", 16 << 20},
		{"1.5MiB", 3 << 19},
		{"1.5G", 3 << 29},
		{"1.5GiB", 3 << 29},
		{"2G", 2 << 30},
		{"2GB", 2 << 30},
		{" 8M ", 8 << 20},
		{"8 M", 8 << 20},
		{"1T", 1 << 40},
		{"4PiB", 4 << 50},
	}
	for _, c := range cases {
		got, err := termkit.ParseSize(c.in)
		require.NoError(t, err, "%q", c.in)
		require.Equal(t, c.want, got, "%q", c.in)
	}
	for _, bad := range []string{"", " ", "lots", "fast", "-1", "+1", "1e9", "1e3KiB", "Inf", "NaN", "M", "KiB",
		".5", "1.", "1.2.3", "12X", "1KiBB", "1 K B", "99999999999G", "5000PiB", "0x10"} {
		_, err := termkit.ParseSize(bad)
		require.Error(t, err, "%q", bad)
	}
}

func TestCount(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   int64
		want string
	}{
		{0, "0"},
		{7, "7"},
		{999, "999"},
		{1000, "1 000"},
		{1204, "1 204"},
		{-12345, "-12 345"},
		{1048576, "1 048 576"},
		{-1 << 63, "-9 223 372 036 854 775 808"},
	}
	for _, c := range cases {
		require.Equal(t, c.want, termkit.Count(c.in), "%d", c.in)
	}
}
