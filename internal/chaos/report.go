// Package chaos is cairn's fault suite: each scenario (in the test files,
// built with the chaos tag and run by `make chaos`) injects one fault into
// the real stack with real process control, then checks from the outside
// that every acknowledged write survived with its digest and that nothing
// leaked once the sweeps ran. This file holds the one table the suite
// prints.
package chaos

import (
	"fmt"
	"io"
	"sync"
	"text/tabwriter"
	"time"
)

// Row is one scenario's account.
type Row struct {
	Fault        string        // what was done, in a few words
	InFlight     int           // operations running when the fault struck
	Acknowledged int           // of them, those the client was told succeeded
	Resumed      int           // those a retry (by the client or the user) finished
	Lost         int           // acknowledged writes missing or with a wrong digest: must be 0
	Leaked       int           // containers, pods, objects, uploads or rows left after the sweep: must be 0
	Recovery     time.Duration // from the fault until the service answered again
}

// Report collects rows from the scenarios; safe for concurrent use.
type Report struct {
	mu   sync.Mutex
	rows []Row
}

// Add appends a row.
func (r *Report) Add(row Row) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rows = append(r.rows, row)
}

// Rows returns a copy of the rows so far.
func (r *Report) Rows() []Row {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Row(nil), r.rows...)
}

// Write prints the table.
func (r *Report) Write(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "fault\tin flight\tacknowledged\tresumed\tlost\tleaked after sweep\ttime to recover\t")
	for _, row := range r.Rows() {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s\t\n", row.Fault, row.InFlight, row.Acknowledged,
			row.Resumed, row.Lost, row.Leaked, row.Recovery.Round(10*time.Millisecond))
	}
	return tw.Flush()
}
