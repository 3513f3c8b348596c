package termkit_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/termkit"
)

func TestPlural(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		n    int64
		want string
	}{{0, "records"}, {1, "record"}, {2, "records"}, {-1, "records"}} {
		require.Equal(t, c.want, termkit.Plural(c.n, "record", "records"), c.n)
	}
}
