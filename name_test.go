package cairn_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
)

func TestValidateName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		input string
		ok    bool
	}{
		{"OK", "build-output_2", true},
		{"OKMaxLength", strings.Repeat("a", 128), true},
		{"ErrEmpty", "", false},
		{"ErrTooLong", strings.Repeat("a", 129), false},
		{"ErrDot", "a.txt", false},
		{"ErrSpace", "a b", false},
		{"ErrSlash", "a/b", false},
		{"ErrUnicode", "café", false},
		{"ErrNUL", "a\x00", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := cairn.ValidateName("workspace", tt.input)
			if tt.ok {
				require.NoError(t, err)
				return
			}
			require.Equal(t, cairn.ReasonInvalidName, cairn.ErrorReason(err))
			require.Contains(t, cairn.ErrorDetail(err), "workspace name")
		})
	}
}

func FuzzValidateName(f *testing.F) {
	for _, seed := range []string{"ok", "", "a.b", strings.Repeat("x", 129), "ü", "-_-"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, name string) {
		err := cairn.ValidateName("artifact", name)
		valid := len(name) >= 1 && len(name) <= 128 && strings.Trim(name,
			"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") == ""
		require.Equal(t, valid, err == nil, "name %q", name)
		if err != nil {
			require.Equal(t, cairn.ReasonInvalidName, cairn.ErrorReason(err))
		}
	})
}

func TestValidateDescription(t *testing.T) {
	t.Parallel()
	ok := strings.Repeat("é", 2048) // 4096 bytes
	require.NoError(t, cairn.ValidateDescription(&ok))
	require.NoError(t, cairn.ValidateDescription(nil))
	long := ok + "x"
	require.Equal(t, cairn.ReasonInvalidParameters, cairn.ErrorReason(cairn.ValidateDescription(&long)))
}

func TestPageValidate(t *testing.T) {
	t.Parallel()
	for _, p := range []cairn.Page{{}, {Offset: 5, Limit: 1}, {Limit: 1000}} {
		require.NoError(t, p.Validate())
	}
	for _, p := range []cairn.Page{{Offset: -1}, {Limit: -1}, {Limit: 1001}} {
		require.Equal(t, cairn.ReasonInvalidQuery, cairn.ErrorReason(p.Validate()))
	}
}

func TestErrorReason(t *testing.T) {
	t.Parallel()
	err := cairn.Errorf(cairn.ReasonNameTaken, "a workspace named '%s' already exists", "x")
	wrapped := &wrapper{err}
	require.Equal(t, cairn.ReasonNameTaken, cairn.ErrorReason(wrapped))
	require.Equal(t, "a workspace named 'x' already exists", cairn.ErrorDetail(wrapped))

	plain := errorString("SQLSTATE 42P01")
	require.Equal(t, cairn.ReasonInternal, cairn.ErrorReason(plain))
	require.Equal(t, "internal error", cairn.ErrorDetail(plain), "an unexpected error's text stays inside")
}

type wrapper struct{ err error }

func (w *wrapper) Error() string { return "context: " + w.err.Error() }
func (w *wrapper) Unwrap() error { return w.err }

type errorString string

func (e errorString) Error() string { return string(e) }

func TestStagingRequestContentType(t *testing.T) {
	t.Parallel()
	sum := "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
	for _, ct := range []string{"", "text/plain", "application/json; charset=utf-8"} {
		require.NoError(t, cairn.StagingRequest{SHA256B64: sum, ContentType: ct}.Validate(), ct)
	}
	for _, ct := range []string{"text/plain\r\nX-Evil: 1", "a\x00b", "tëxt/plain", strings.Repeat("a", 256)} {
		err := cairn.StagingRequest{SHA256B64: sum, ContentType: ct}.Validate()
		require.Equal(t, cairn.ReasonInvalidParameters, cairn.ErrorReason(err), "%q", ct)
	}
}

func TestParseAuditTypeKnowsEveryType(t *testing.T) {
	for _, typ := range cairn.AuditTypes() {
		got, err := cairn.ParseAuditType(string(typ))
		require.NoError(t, err)
		require.Equal(t, typ, got)
	}
	_, err := cairn.ParseAuditType("EXEC_SOMETHING")
	require.Equal(t, cairn.ReasonInvalidQuery, cairn.ErrorReason(err))
}
