package cairn_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
)

func TestSweepResultErrorsAreBounded(t *testing.T) {
	t.Parallel()
	var r cairn.SweepResult
	for i := range 25 {
		r.AddError(fmt.Sprint("failure ", i))
	}
	require.Len(t, r.Errors, cairn.MaxSweepErrors)
	require.Equal(t, 5, r.ErrorsOmitted)
	require.Equal(t, "failure 0", r.Errors[0], "the first ones are kept")
	require.Equal(t, "failure 19", r.Errors[cairn.MaxSweepErrors-1])
}
