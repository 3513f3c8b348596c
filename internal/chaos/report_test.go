package chaos

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestReportTable(t *testing.T) {
	t.Parallel()
	var r Report
	r.Add(Row{Fault: "kill -9 server", InFlight: 30, Acknowledged: 10, Resumed: 20, Recovery: 1234 * time.Millisecond})
	r.Add(Row{Fault: "store restart", InFlight: 5, Lost: 1, Leaked: 2})
	var out strings.Builder
	require.NoError(t, r.Write(&out))
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	require.Len(t, lines, 3)
	require.Contains(t, lines[0], "leaked after sweep")
	require.Regexp(t, `kill -9 server\s+30\s+10\s+20\s+0\s+0\s+1\.23s`, lines[1])
	require.Regexp(t, `store restart\s+5\s+0\s+0\s+1\s+2\s+0s`, lines[2])
}
