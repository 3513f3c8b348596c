package cairn

import (
	"fmt"
	"testing"
)

func TestSweepResultErrorsAreBounded(t *testing.T) {
	t.Parallel()
	var r SweepResult
	for i := range 25 {
		r.AddError(fmt.Sprint("failure ", i))
	}
	if len(r.Errors) != MaxSweepErrors || r.ErrorsOmitted != 5 {
		t.Fatalf("kept %d, omitted %d; want %d and 5", len(r.Errors), r.ErrorsOmitted, MaxSweepErrors)
	}
	if r.Errors[0] != "failure 0" || r.Errors[MaxSweepErrors-1] != "failure 19" {
		t.Fatalf("the first ones are kept: %q … %q", r.Errors[0], r.Errors[MaxSweepErrors-1])
	}
}
