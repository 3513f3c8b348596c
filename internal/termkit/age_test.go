package termkit_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/termkit"
)

var epoch = time.Date(2026, 8, 14, 15, 27, 0, 0, time.UTC)

func TestAge(t *testing.T) {
	t.Parallel()
	cases := []struct {
		ago  time.Duration
		want string
	}{
		{-time.Hour, "now"},
		{0, "now"},
		{59 * time.Second, "now"},
		{time.Minute, "1m"},
		{12*time.Minute + 59*time.Second, "12m"},
		{59 * time.Minute, "59m"},
		{time.Hour, "1h"},
		{3*time.Hour + 59*time.Minute, "3h"},
		{23 * time.Hour, "23h"},
		{24 * time.Hour, "1d"},
		{5*24*time.Hour + 23*time.Hour, "5d"},
		{364 * 24 * time.Hour, "364d"},
		{365 * 24 * time.Hour, "1y"},
		{800 * 24 * time.Hour, "2y"},
	}
	for _, c := range cases {
		require.Equal(t, c.want, termkit.Age(epoch, epoch.Add(-c.ago)), "%v", c.ago)
	}
}

func TestStamp(t *testing.T) {
	t.Parallel()
	berlin := time.FixedZone("CEST", 2*3600)
	cases := []struct {
		t    time.Time
		want string
	}{
		{epoch.Add(-3 * time.Hour), "2026-08-14 12:27:00 UTC (3h ago)"},
		{epoch.Add(-10 * time.Second), "2026-08-14 15:26:50 UTC (now)"},
		{epoch.In(berlin).Add(-5 * 24 * time.Hour), "2026-08-09 15:27:00 UTC (5d ago)"},
	}
	for _, c := range cases {
		require.Equal(t, c.want, termkit.Stamp(epoch, c.t), "%v", c.t)
	}
}
