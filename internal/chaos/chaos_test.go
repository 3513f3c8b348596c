//go:build chaos

package chaos

import (
	"fmt"
	"os"
	"testing"

	"github.com/cairn-dev/cairn/internal/stack/stacktest"
)

// report is the suite's table, printed once every scenario has run.
var report Report

func TestMain(m *testing.M) {
	stacktest.Main(m, func() {
		fmt.Println()
		_ = report.Write(os.Stdout) // stdout is the table's only reader
	})
}

// record adds a scenario's row to the table and fails the scenario if it
// lost an acknowledged write or leaked anything.
func record(t *testing.T, row Row) {
	t.Helper()
	report.Add(row)
	if row.Lost != 0 {
		t.Errorf("%s: %d acknowledged writes lost", row.Fault, row.Lost)
	}
	if row.Leaked != 0 {
		t.Errorf("%s: %d things leaked after the sweep", row.Fault, row.Leaked)
	}
}
