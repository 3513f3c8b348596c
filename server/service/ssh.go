package service

import (
	"context"
	"fmt"

	"github.com/cairn-dev/cairn"
)

// RecordSSHSession writes an SSH workbench session's start or end
// (cairn.AuditSSHSessionStarted, cairn.AuditSSHSessionEnded) to the audit
// trail, as ctx's actor, with meta (the key's name and fingerprint, the
// remote address, the times). Any other type is refused: the front doors
// write audit rows only through the changes they describe.
func (s *Service) RecordSSHSession(ctx context.Context, typ cairn.AuditType, meta map[string]any) error {
	if typ != cairn.AuditSSHSessionStarted && typ != cairn.AuditSSHSessionEnded {
		return fmt.Errorf("record ssh session: %s is not an SSH session's audit type", typ)
	}
	return s.audit(ctx, s.store, typ, meta)
}
