package service

import (
	"context"
	"path"
	"strings"

	"github.com/oklog/ulid/v2"

	"github.com/cairn-dev/cairn"
)

// KeyPrefixes are the object-key prefixes of the bucket:
// keys are [<base>/]<staging>/<workspace>/<ULID> and
// [<base>/]<store>/<workspace>/<ULID>.
type KeyPrefixes struct {
	Base    string // optional
	Staging string // default "staging"
	Store   string // default "store"
}

// keyScheme holds the two cleaned prefixes, without trailing slashes.
type keyScheme struct {
	staging   string
	store     string
	snapshots string // snapshot content, bundles and manifests
}

func newKeyScheme(p KeyPrefixes) keyScheme {
	join := func(part, def string) string {
		if part == "" {
			part = def
		}
		return strings.Trim(path.Clean(path.Join("/", p.Base, part)), "/")
	}
	return keyScheme{staging: join(p.Staging, "staging"), store: join(p.Store, "store"), snapshots: join("", "snapshots")}
}

func (k keyScheme) stagingKey(workspaceID string) string {
	return k.staging + "/" + workspaceID + "/" + ulid.Make().String()
}

// snapshotKey is a new object of a snapshot run: content is found by its
// rows, never by its key.
func (k keyScheme) snapshotKey() string {
	return k.snapshots + "/" + ulid.Make().String()
}

func (k keyScheme) finalKey(workspaceID string) string {
	return k.store + "/" + workspaceID + "/" + ulid.Make().String()
}

// checkStagingKey accepts exactly the shapes this server issues for the
// workspace: no other prefix, no extra segment, one uppercase ULID. Mint
// issues final keys, which register takes as they are; legacy is true for
// a key under the staging prefix, minted before register stopped copying,
// which register still copies to a final key.
func (k keyScheme) checkStagingKey(workspaceID, key string) (legacy bool, err error) {
	for _, prefix := range []string{k.store, k.staging} {
		rest, ok := strings.CutPrefix(key, prefix+"/"+workspaceID+"/")
		if ok && isULID(rest) {
			return prefix == k.staging, nil
		}
	}
	return false, cairn.Errorf(cairn.ReasonStagingKeyInvalid,
		"staging object key '%s' was not issued for workspace %s", key, workspaceID)
}

// isULID reports a canonical ULID: 26 uppercase Crockford base32
// characters whose first is at most '7' (the 128-bit range).
func isULID(s string) bool {
	if len(s) != ulid.EncodedSize || s[0] > '7' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !strings.ContainsRune("0123456789ABCDEFGHJKMNPQRSTVWXYZ", rune(s[i])) {
			return false
		}
	}
	return true
}

// PinKeyPrefixes writes the directory markers of the staging and store
// prefixes (see ObjectStore.Pin), so that deleting the last object under
// one never races a put under it.
func (s *Service) PinKeyPrefixes(ctx context.Context) error {
	for _, prefix := range []string{s.keys.staging, s.keys.store, s.keys.snapshots} {
		if err := s.objects.Pin(ctx, prefix); err != nil {
			return err
		}
	}
	return nil
}
