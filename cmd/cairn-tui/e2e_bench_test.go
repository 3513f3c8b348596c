package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/internal/tmuxtest"
)

// BenchmarkRealBinary measures the built cairn-tui in tmux against a real
// server holding 1 000 workspaces, one of them with 10 000 artifacts:
// launch to a drawn list, peak RSS after opening, scrolling and filtering
// the big workspace, and the CPU an idle TUI uses over 60 s with the
// events socket open and nothing changing.
// Run once per invocation; the numbers are reported as metrics.
func BenchmarkRealBinary(b *testing.B) {
	srv := stacktest.StartServer(b, stacktest.ServerOptions{})
	seedLarge(b, srv.Database)
	bin := stacktest.Binary(b, "cairn-tui")
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		p := tmuxtest.Start(b, tmuxtest.Options{Env: []string{"NO_COLOR=1", "CAIRN_URL=" + srv.URL,
			"CAIRN_TOKEN=" + srv.Token, "XDG_CONFIG_HOME=" + b.TempDir()}}, bin)
		p.Poll = 5 * time.Millisecond
		p.WaitForText(30*time.Second, "workspaces (1 001)", "a-big")
		launch := time.Since(start)
		p.Poll = 100 * time.Millisecond

		p.Keys("g", "Enter")
		p.WaitForText(60*time.Second, "artifacts (10 000")
		p.Keys("G", "g", "C-d", "C-d", "o")
		p.Keys("/")
		p.Type("art-99")
		p.WaitForText(30*time.Second, "art-999")
		p.Keys("Escape")
		pid := p.PID()
		rss := statusKiB(b, pid, "VmHWM")

		const idle = 60 * time.Second
		before := cpuTicks(b, pid)
		time.Sleep(idle) // the measurement window itself
		used := cpuTicks(b, pid) - before
		idleCPU := float64(used) / clockTicks / idle.Seconds() * 100

		b.ReportMetric(float64(launch.Milliseconds()), "launch-ms")
		b.ReportMetric(float64(rss)/1024, "rss-peak-MB")
		b.ReportMetric(idleCPU, "idle-cpu-%")
		fmt.Printf("cairn-tui real binary: launch to 1 000 workspaces drawn %d ms (budget 1 000 ms, ratio %.2f); "+
			"RSS peak with 10 000 artifacts %.1f MB (budget 100 MB, ratio %.2f); idle CPU over 60 s %.2f %% of a core\n",
			launch.Milliseconds(), launch.Seconds(), float64(rss)/1024, float64(rss)/1024/100, idleCPU)
		p.Keys("q")
	}
}

// seedLarge writes 1 000 workspaces and 10 000 artifacts straight into the
// server's database: "a-big" sorts first and holds the artifacts.
func seedLarge(b *testing.B, dsn string) {
	b.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, q := range []string{
		`INSERT INTO workspaces (id, name, volume_name, created_at, updated_at)
		 SELECT gen_random_uuid()::text, CASE WHEN i = 0 THEN 'a-big' ELSE 'ws-' || lpad(i::text, 4, '0') END,
		        'bench-' || i, now(), now() FROM generate_series(0, 1000) i`,
		`INSERT INTO artifacts (id, workspace_id, name, description, object_key, mime_type, size, state,
		                        content_written_at, created_at, updated_at)
		 SELECT 'A' || lpad(j::text, 25, '0'), (SELECT id FROM workspaces WHERE name = 'a-big'), 'art-' || j,
		        CASE WHEN j % 5 = 0 THEN 'described artifact ' || j END, 'store/big/' || j, 'text/plain', j,
		        CASE WHEN j % 100 = 0 THEN 'MISSING_OBJECT' ELSE 'RECORDED' END, now(), now(), now()
		   FROM generate_series(1, 10000) j`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's times on Linux.
const clockTicks = 100

// cpuTicks is a process's user plus system time, in clock ticks.
func cpuTicks(b *testing.B, pid int) int64 {
	b.Helper()
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		b.Fatal(err)
	}
	// Fields after the command name (in parentheses): utime and stime are
	// the 14th and 15th fields of the line.
	fields := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+2:]))
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return utime + stime
}

// statusKiB reads one kB field of /proc/<pid>/status.
func statusKiB(b *testing.B, pid int, field string) int64 {
	b.Helper()
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	b.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}
