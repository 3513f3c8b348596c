package service

import (
	"strings"
	"testing"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
)

// keysWorkspace is the workspace the key tests issue keys for.
const keysWorkspace = "3f2c8a51-6b0e-4d7a-9c1f-2e5b7d9a0c13"

// keysULID is a fixed, canonical ULID.
const keysULID = "01J8ZQ4Y0V5R8W3M6N2P7K9T1B"

// crockford is the alphabet of a canonical ULID.
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

func TestNewKeyScheme(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		prefixes  KeyPrefixes
		staging   string
		store     string
		snapshots string
	}{
		{"OKDefaults", KeyPrefixes{}, "staging", "store", "snapshots"},
		{"OKBase", KeyPrefixes{Base: "poc"}, "poc/staging", "poc/store", "poc/snapshots"},
		{"OKBaseAndPrefixes", KeyPrefixes{Base: "poc", Staging: "up", Store: "keep"}, "poc/up", "poc/keep", "poc/snapshots"},
		{"OKSlashesCleaned", KeyPrefixes{Base: "/a//b/", Staging: "/st//g/", Store: "s/"}, "a/b/st/g", "a/b/s", "a/b/snapshots"},
		{"OKRootBaseIsNoBase", KeyPrefixes{Base: "/"}, "staging", "store", "snapshots"},
		{"OKDotSegmentsCleaned", KeyPrefixes{Base: "./a/./b", Staging: "x/../staging"}, "a/b/staging", "a/b/store", "a/b/snapshots"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			k := newKeyScheme(tt.prefixes)
			require.Equal(t, keyScheme{staging: tt.staging, store: tt.store, snapshots: tt.snapshots}, k)
			snap, ok := strings.CutPrefix(k.snapshotKey(), tt.snapshots+"/")
			require.True(t, ok)
			_, err := ulid.ParseStrict(snap)
			require.NoError(t, err)

			staging := k.stagingKey(keysWorkspace)
			requireKeyShape(t, tt.staging, staging)
			final := k.finalKey(keysWorkspace)
			requireKeyShape(t, tt.store, final)
			require.NotEqual(t, staging[len(staging)-ulid.EncodedSize:], final[len(final)-ulid.EncodedSize:],
				"every key gets its own ULID")
		})
	}
}

// requireKeyShape checks that key is <prefix>/<keysWorkspace>/<ULID>, with
// no leading or trailing slash and no empty segment.
func requireKeyShape(t *testing.T, prefix, key string) {
	t.Helper()
	rest, ok := strings.CutPrefix(key, prefix+"/"+keysWorkspace+"/")
	require.True(t, ok, "key %q lacks the prefix %q", key, prefix)
	_, err := ulid.ParseStrict(rest)
	require.NoError(t, err)
	require.Equal(t, strings.ToUpper(rest), rest)
	require.NotContains(t, key, "//")
	require.False(t, strings.HasPrefix(key, "/") || strings.HasSuffix(key, "/"))
}

func TestCheckStagingKey(t *testing.T) {
	t.Parallel()

	t.Run("OKIssuedKeys", func(t *testing.T) {
		t.Parallel()
		for _, p := range []KeyPrefixes{{}, {Base: "poc"}, {Base: "/a//b/", Staging: "in/"}} {
			k := newKeyScheme(p)
			for range 100 {
				legacy, err := k.checkStagingKey(keysWorkspace, k.finalKey(keysWorkspace))
				require.NoError(t, err)
				require.False(t, legacy, "mint issues final keys, which register takes as they are")
				legacy, err = k.checkStagingKey(keysWorkspace, k.stagingKey(keysWorkspace))
				require.NoError(t, err)
				require.True(t, legacy, "a key minted before the upgrade is still copied")
			}
		}
	})

	t.Run("ErrStagingKeyInvalid", func(t *testing.T) {
		t.Parallel()
		k := newKeyScheme(KeyPrefixes{Base: "poc"})
		good := "poc/staging/" + keysWorkspace + "/" + keysULID
		_, err := k.checkStagingKey(keysWorkspace, good)
		require.NoError(t, err)

		tests := []struct {
			name string
			key  string
		}{
			{"Empty", ""},
			{"NoBase", "staging/" + keysWorkspace + "/" + keysULID},
			{"FinalKeyOfOtherWorkspace", "poc/store/9a0c1313-6b0e-4d7a-9c1f-2e5b7d9a0c13/" + keysULID},
			{"FinalKeyWithoutBase", "store/" + keysWorkspace + "/" + keysULID},
			{"OtherWorkspace", "poc/staging/9a0c1313-6b0e-4d7a-9c1f-2e5b7d9a0c13/" + keysULID},
			{"WorkspacePrefixOnly", "poc/staging/" + keysWorkspace[:8] + "/" + keysULID},
			{"LowercaseULID", "poc/staging/" + keysWorkspace + "/" + strings.ToLower(keysULID)},
			{"MixedCaseULID", "poc/staging/" + keysWorkspace + "/" + keysULID[:25] + "b"},
			{"ShortULID", good[:len(good)-1]},
			{"LongULID", good + "0"},
			{"ULIDOverflow", "poc/staging/" + keysWorkspace + "/8" + keysULID[1:]},
			{"ExcludedLetterI", "poc/staging/" + keysWorkspace + "/" + keysULID[:25] + "I"},
			{"ExcludedLetterL", "poc/staging/" + keysWorkspace + "/" + keysULID[:25] + "L"},
			{"ExcludedLetterO", "poc/staging/" + keysWorkspace + "/" + keysULID[:25] + "O"},
			{"ExcludedLetterU", "poc/staging/" + keysWorkspace + "/" + keysULID[:25] + "U"},
			{"ExtraSegmentBefore", "poc/staging/" + keysWorkspace + "/x/" + keysULID},
			{"ExtraSegmentAfter", good + "/x"},
			{"TrailingSlash", good + "/"},
			{"LeadingSlash", "/" + good},
			{"DoubleSlash", "poc/staging//" + keysWorkspace + "/" + keysULID},
			{"DotDot", "poc/staging/" + keysWorkspace + "/../" + keysWorkspace + "/" + keysULID},
			{"DotDotIntoWorkspace", "poc/staging/other/../" + keysWorkspace + "/" + keysULID},
			{"Dot", "poc/staging/./" + keysWorkspace + "/" + keysULID},
			{"Whitespace", good + " "},
			{"Newline", good + "\n"},
			{"NUL", good[:len(good)-1] + "\x00"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				_, err := k.checkStagingKey(keysWorkspace, tt.key)
				require.Equal(t, cairn.ReasonStagingKeyInvalid, cairn.ErrorReason(err))
				require.Equal(t, "staging object key '"+tt.key+"' was not issued for workspace "+keysWorkspace,
					cairn.ErrorDetail(err))
			})
		}
	})
}

func TestIsULID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		s    string
		ok   bool
	}{
		{"OKMade", ulid.Make().String(), true},
		{"OKFixed", keysULID, true},
		{"OKZero", strings.Repeat("0", 26), true},
		{"OKMax", "7" + strings.Repeat("Z", 25), true},
		{"ErrOverflow", "8" + strings.Repeat("0", 25), false},
		{"ErrEmpty", "", false},
		{"ErrShort", keysULID[:25], false},
		{"ErrLong", keysULID + "0", false},
		{"ErrLowercase", strings.ToLower(keysULID), false},
		{"ErrExcludedLetter", "0000000000000000000000000I", false},
		{"ErrPunctuation", "0000000000000000000000000-", false},
		{"ErrMultibyte", "000000000000000000000000é", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.ok, isULID(tt.s))
		})
	}
}

// FuzzCheckStagingKey checks that whatever checkStagingKey accepts has
// exactly the issued shape, for a scheme with and without a base prefix.
func FuzzCheckStagingKey(f *testing.F) {
	schemes := []keyScheme{newKeyScheme(KeyPrefixes{}), newKeyScheme(KeyPrefixes{Base: "poc"})}
	for _, k := range schemes {
		valid := k.staging + "/" + keysWorkspace + "/" + keysULID
		f.Add(valid)
		f.Add(k.stagingKey(keysWorkspace))
		f.Add(valid + "/")
		f.Add("/" + valid)
		f.Add(valid[:len(valid)-1])
		f.Add(valid + "Z")
		f.Add(strings.ToLower(valid))
		f.Add(k.staging + "//" + keysWorkspace + "/" + keysULID)
		f.Add(k.staging + "/" + keysWorkspace + "/../" + keysULID)
		f.Add(k.staging + "/" + keysWorkspace + "/x/" + keysULID)
		f.Add(k.store + "/" + keysWorkspace + "/" + keysULID)
	}
	f.Add("")
	f.Add("staging/" + keysWorkspace + "/" + "8" + keysULID[1:])

	f.Fuzz(func(t *testing.T, key string) {
		for _, k := range schemes {
			legacy, err := k.checkStagingKey(keysWorkspace, key)
			if err != nil {
				require.Equal(t, cairn.ReasonStagingKeyInvalid, cairn.ErrorReason(err))
				continue
			}
			prefix := k.store
			if legacy {
				prefix = k.staging
			}
			id, ok := strings.CutPrefix(key, prefix+"/"+keysWorkspace+"/")
			require.True(t, ok, "accepted %q without the staging or store prefix", key)
			require.Len(t, id, 26)
			for _, c := range id {
				require.Contains(t, crockford, string(c), "accepted %q with a non-Crockford character", key)
			}
			_, perr := ulid.ParseStrict(id)
			require.NoError(t, perr)
			require.Equal(t, strings.Count(k.staging, "/")+3, len(strings.Split(key, "/")),
				"accepted %q with an extra segment", key)
			require.NotContains(t, key, "..")
			require.NotContains(t, key, "//")
		}
	})
}
