package envelope

import (
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

func FuzzRequestID(f *testing.F) {
	for _, seed := range []string{"abc-123", "", strings.Repeat("x", 128), strings.Repeat("x", 129), "a\nb", "ü", "\x7f"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, given string) {
		id := RequestID(given)
		require.NotEmpty(t, id)
		require.LessOrEqual(t, len(id), MaxRequestIDLength)
		for _, c := range []byte(id) {
			require.True(t, c >= 0x20 && c <= 0x7e, "a request ID is printable ASCII")
		}
		if id != given {
			_, err := uuid.Parse(id)
			require.NoError(t, err, "a refused ID is replaced by a fresh UUID")
		}
	})
}
